"""Issue 51.12: a run file someone left in a shared index's runs/ with a lone surrogate (a
`\\ud800` escape: valid JSON, not Unicode text) or nested 200,000 deep made `/`, `/analytics`
and the pages that list runs answer 500. Now such a file is listed as unreadable, with why,
and the good runs are still shown; `glassrag compare` says the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.config import Config
from glassrag.evaluate.runs import evaluate
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from tests.conftest import HANDBOOK_QUESTIONS

pytest.importorskip("starlette")
pytest.importorskip("httpx")

PAGES = ("/", "/.json", "/analytics", "/analytics.json", "/ask?q=E-4107", "/ask.json?q=E-4107",
         "/documents", "/glossary", "/lab", "/development")


@pytest.fixture
def index(tmp_path: Path, corpus: Path) -> Path:
    folder = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(folder)]) == 0
    run = evaluate(Pipeline(EmbeddedStore(folder).read(), Config()), HANDBOOK_QUESTIONS,
                   golden_path="golden.jsonl", split="all", index_path=str(folder)).to_dict()
    (folder / "runs").mkdir()
    (folder / "runs" / "good.json").write_text(json.dumps(run))
    lone = json.loads(json.dumps(run))
    lone["questions"][0]["question"] = "What does \ud800 mean?"
    (folder / "runs" / "lone.json").write_text(json.dumps(lone))  # ASCII JSON: "\\ud800"
    lone_key = json.loads(json.dumps(run))
    lone_key["stages"]["\udfff"] = lone_key["stages"].popitem()[1]
    (folder / "runs" / "lonekey.json").write_text(json.dumps(lone_key))
    (folder / "runs" / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    return folder


def test_every_page_answers_and_names_the_unreadable_runs(index: Path) -> None:
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    client = TestClient(create_app([index]), base_url="http://127.0.0.1")
    for page in PAGES:
        assert client.get(page).status_code == 200, page
    front = client.get("/.json").json()["corpora"][0]  # no run of the test split: the front page lists
    unreadable = {u["name"]: u["problem"] for u in front["unreadable"]}  # the runs it could not read
    assert sorted(unreadable) == ["deep", "lone", "lonekey"]
    assert "nested too deep" in unreadable["deep"] and "lone surrogate, \\ud800" in unreadable["lone"]
    analytics = client.get("/analytics").text
    assert "good" in analytics
    for name in ("lone", "lonekey", "deep"):
        assert client.get(f"/runs/{name}").status_code in (200, 422), name


@pytest.mark.parametrize("name, why", [("lone", "not Unicode"), ("lonekey", "not Unicode"),
                                       ("deep", "nested too deep")])
def test_the_source_says_why_a_run_is_unreadable(index: Path, name: str, why: str) -> None:
    from glassrag.web.catalog import Source

    run = Source("index", index).run(name)
    assert run.run is None and why in run.problem


@pytest.mark.parametrize("name, why", [("lone", "not Unicode"), ("deep", "nested too deep")])
def test_compare_refuses_them_with_a_message(index: Path, capsys, name: str, why: str) -> None:
    code = main(["compare", str(index / "runs" / "good.json"), str(index / "runs" / f"{name}.json")])
    assert code != 0
    said = capsys.readouterr().err
    assert why in " ".join(said.split()) and "Traceback" not in said
