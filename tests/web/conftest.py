"""Fixtures of the web tests: the demo index built, trained and calibrated in a temporary
folder with two saved runs, once per session; an in-process client over it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web app needs the web extra: pip install 'glassrag[web]'")
pytest.importorskip("jinja2", reason="the web app needs the web extra: pip install 'glassrag[web]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient  # noqa: E402

from glassrag.config import Config  # noqa: E402
from glassrag.demo import demo_docs, demo_golden  # noqa: E402
from glassrag.evaluate.golden import load_golden  # noqa: E402
from glassrag.evaluate.grid import from_flags  # noqa: E402
from glassrag.evaluate.runs import evaluate  # noqa: E402
from glassrag.evaluate.sweep import run_sweep, sweeps_folder, write_sweep  # noqa: E402
from glassrag.evaluate.tune import calibrate_index, train_reranker  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.store import EmbeddedStore  # noqa: E402
from glassrag.web.server import create_app  # noqa: E402

BASE_URL = "http://127.0.0.1"
PLAIN = {"rerank": {"method": "none"}, "gate": {"enabled": False}}
SWEEP = ["bm25.k1=0.9,1.5", "bm25.b=0.4,0.75,0.9"]  # sweeps/k1-b: a 2 × 3 grid on the train split


def write_run(folder: Path, name: str, config: Config) -> dict:
    """Evaluate the test split with `config` and save the run as runs/NAME.json; returns it as plain data."""
    index = EmbeddedStore(folder).read()
    questions = load_golden(demo_golden(), "test")
    run = evaluate(Pipeline(index, config), questions, golden_path=str(demo_golden()), split="test",
                   index_path=str(folder))
    (folder / "runs").mkdir(exist_ok=True)
    data = run.to_dict()
    (folder / "runs" / f"{name}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return data


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo handbook as `glassrag demo` builds it: reranker trained and gate calibrated on
    the train split, and runs/defaults-test.json and runs/plain-test.json (no reranker, no gate),
    and sweeps/k1-b/ (a k1 × b sweep)."""
    folder = tmp_path_factory.mktemp("web") / "demo"
    config = Config()
    index, report = build_index([demo_docs()], config)
    assert not report.failed
    questions = load_golden(demo_golden())
    index.extra["reranker"] = train_reranker(index, config, questions, str(demo_golden()))
    gate, reader = calibrate_index(index, config, questions, config.gate.rule, str(demo_golden()))
    index.extra["gate"], index.extra["reader"] = gate, reader
    EmbeddedStore(folder).write(index)
    write_run(folder, "defaults-test", config)
    write_run(folder, "plain-test", config.with_overrides(**PLAIN))
    sweep = run_sweep(folder, demo_golden(), from_flags(SWEEP), name="k1-b")
    write_sweep(sweep, sweeps_folder(folder) / "k1-b")
    return folder


@pytest.fixture(scope="session")
def client(demo_index: Path) -> TestClient:
    return TestClient(create_app([demo_index]), base_url=BASE_URL)


@pytest.fixture(scope="session")
def token(client: TestClient) -> str:
    """The server's token as the page's own forms carry it: a GET of other settings than the
    index's that would evaluate a split needs it (issue 51.3), as the user's form sends it."""
    return form_token(client)


def form_token(client: TestClient) -> str:
    found = re.search(r'name="token" value="([^"]+)"', client.get("/ask").text)
    assert found is not None
    return found.group(1)


@pytest.fixture(scope="session")
def make_client():
    """A client of a new app over some index folders (the factory tests use)."""
    return lambda *folders: TestClient(create_app(list(folders)), base_url=BASE_URL)


@pytest.fixture
def index_copy(demo_index: Path, tmp_path: Path) -> Path:
    """A copy of the demo index a test may change."""
    target = tmp_path / "demo"
    shutil.copytree(demo_index, target)
    return target


@pytest.fixture(scope="session")
def golden_by_id() -> dict:
    return {q.id: q for q in load_golden(demo_golden())}
