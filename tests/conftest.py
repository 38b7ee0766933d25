"""Shared fixtures: tiny inline corpora written to a temporary folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.golden import Question, Span
from glassrag.indexer import build_index
from glassrag.store.base import Index

HANDBOOK = {
    "manual.md": """---
title: TX-200 Manual
date: 2025-02-10
---
# TX-200 Manual

## 1. Setup

Mount the instrument on the tripod and level it with the circular bubble.

## 2. Error codes

### 2.1 Sensor errors

E-4107 means the tilt sensor lost calibration. Run the field tilt calibration.

### 2.2 Power errors

E-2210 means the battery is below ten percent. Change the battery soon.
""",
    "scanner.md": """# TX-2000 Manual

## 1. Errors

E-4170 means the mirror motor is overheating. Let the scanner cool down for twenty minutes.
""",
    "travel.html": """<html><head><title>Travel policy</title><style>p{color:red}</style>
<script>var secret = "do not index";</script></head>
<body><h1>Travel policy</h1><h2>Per diem</h2><p>Staff travelling abroad receive a daily
allowance for meals.</p><table><tr><th>City</th><th>Rate</th></tr>
<tr><td>Lisbon</td><td>EUR 45</td></tr></table><h2>Mileage</h2>
<p>Private cars are reimbursed per kilometre driven on company business.</p></body></html>
""",
    "notes.txt": "Quarterly notes.\nThe fleet server updates firmware during quiet hours.\n",
}


# fixtures that start something outside the test process (a real PostgreSQL server,
# tests/store/conftest.py; a real web server on a socket; a headless browser) or build the demo
# end to end: `demo_index` (tests/web/conftest.py builds it, trains the reranker, calibrates the
# gate and writes runs and a sweep, about 4 minutes on 2 loaded cores; tests/test_demo_corpus.py
# builds it), `demo` (the module fixtures of the workbench, sweep, reading-to-decide and local
# generator tests), `demo_index_for_log` and `measured_log` (an experiment measured on it). A
# test that uses one, directly or through another fixture, is marked slow, as are the tests
# that start glassrag's command line (tests/cli_helper.py): `make check` leaves them out
SLOW_FIXTURES = frozenset({"pg_server", "live", "live_log", "browser", "demo_index", "demo", "demo_index_for_log",
                           "measured_log"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session", autouse=True)
def glassrag_cache(tmp_path_factory) -> Path:
    """ONNX graphs built from model weights (glassrag/dense/onnx_embed.py) go to a temporary
    folder, once per session, never to ~/.cache; subprocesses inherit it."""
    import os

    folder = tmp_path_factory.mktemp("glassrag-cache")
    os.environ["GLASSRAG_CACHE"] = str(folder)
    return folder


# BM25 ranks chunk 3 (E-4107) first for the first question, 4 alone for the second, the
# Setup chunk alone for "tripod rental price": both label classes for the reranker, two
# found answers and one unanswerable question that matches for the gate
HANDBOOK_QUESTIONS = [
    Question("sensor", "What does E-4107 mean?", True, split="train",
             answers=(Span("manual", "§ 2.1 Sensor errors"),)),
    Question("battery", "battery below ten percent", True, split="train",
             answers=(Span("manual", "§ 2.2 Power errors"),)),
    Question("tripod", "tripod rental price", False, split="train"),
    Question("mirror", "mirror motor", True, answers=(Span("scanner", "§ 1. Errors"),)),
]


def write_corpus(folder: Path, files: dict[str, str] = HANDBOOK) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def comparable_run(run) -> dict:
    """A run as data without what measures time (to compare two runs of the same figures)."""
    import json

    return comparable_data(json.loads(json.dumps(run.to_dict())))


def comparable_data(data: dict) -> dict:
    """A run's data (`Run.to_dict()`, or a run file read back) without what measures time."""
    for key in ("seconds", "created"):
        data.pop(key)
    for q in data["questions"]:
        for stage in q["stages"].values():
            stage.pop("ms")
    return data


def live_generation(index_dir: Path) -> Path:
    """The folder of an index's live generation (the one CURRENT names)."""
    return index_dir / (index_dir / "CURRENT").read_text().strip()


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_corpus(tmp_path / "docs")


@pytest.fixture
def small_config() -> Config:
    """Both retrievers fused with RRF (the tests check fusion arithmetic), 4 LSA dimensions."""
    return Config().with_overrides(lsa={"dim": 4}, retrieve={"retrievers": ["bm25", "lsa"]},
                                   fuse={"method": "rrf"})


@pytest.fixture
def index(corpus: Path, small_config: Config) -> Index:
    built, report = build_index([corpus], small_config)
    assert not report.failed
    return built


# property tests keep no example database in the working tree, and take the time they need
# on a busy machine
from hypothesis import settings  # noqa: E402

settings.register_profile("glassrag", database=None, deadline=None, max_examples=200)
settings.load_profile("glassrag")


def as_unprivileged() -> list[str]:
    """The command prefix that runs a child as the unprivileged user `nobody` when the tests
    run as root (root reads and writes any folder, so permission errors need another user);
    [] when they do not run as root. Skips the test when that user cannot be had, or cannot
    run glassrag from this checkout (a checkout inside a folder only root may enter)."""
    import os
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root reads and writes every folder")
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import glassrag.cli"], capture_output=True,
                           text=True, timeout=60, cwd="/")
    if probe.returncode != 0:
        pytest.skip("the user nobody cannot run glassrag from this checkout (it lies in a folder "
                    f"other users may not enter): {probe.stderr.strip().splitlines()[-1:]}")
    return prefix
