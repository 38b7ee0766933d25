"""The development page with rule-2 evidence written by hand: each experiment's verdict and the
figure that decided it (pooled and per corpus), a shipped mark, rule-1 evidence still read,
and the shared cause as a table; the JSON twin carries the same figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from glassrag.experiment import verdict as rule
from glassrag.experiment.cause import shared_cause
from glassrag.web.server import create_app

TOML = """title = "{title}"
hypothesis = "h"
metric = "answer hit@5"
corpora = ["demo", "other"]
verdict = "{verdict}"
shipped = {shipped}

[change]
cap = {{ per_document = 1 }}
"""


def figures(up: int, down: int, same: int) -> dict:
    baseline = [0.0] * up + [1.0] * down + [1.0] * same
    change = [1.0] * up + [0.0] * down + [1.0] * same
    return {"answer hit@5": {"ids": [f"q{i}" for i in range(len(baseline))], "baseline": baseline, "change": change}}


def corpus_evidence(per_question: dict) -> dict:
    f = per_question["answer hit@5"]
    t = rule.paired_test("answer hit@5", f["baseline"], f["change"])
    mean = lambda xs: {"value": sum(xs) / len(xs), "low": None, "high": None, "n": len(xs)}  # noqa: E731
    return {"questions": t["n"], "per_question": per_question, "flips": {"improved": [], "degraded": []},
            "gate": {}, "runs": {}, "metrics": {"answer hit@5": {
                "measured": True, "baseline": mean(f["baseline"]), "change": mean(f["change"]), "better": "higher",
                **{k: t[k] for k in ("diff", "p", "test", "n", "improved", "degraded")}}}}


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    log = tmp_path_factory.mktemp("project") / "experiments"
    (log / "results").mkdir(parents=True)
    (log / "corpora.toml").write_text('[demo]\ntitle = "the demo"\ndocuments = ["glassrag:demo"]\n'
                                      'golden = "glassrag:demo"\n[other]\ntitle = "another"\n'
                                      'documents = ["glassrag:demo"]\ngolden = "glassrag:demo"\n', encoding="utf-8")
    per = {"demo": corpus_evidence(figures(6, 1, 3)), "other": corpus_evidence(figures(4, 1, 5))}
    verdict, reason, t = rule.decide("answer hit@5", [], per)
    assert verdict == "kept"
    (log / "good.toml").write_text(TOML.format(title="A kept change", verdict="kept", shipped="true"))
    (log / "results" / "good.json").write_text(json.dumps({
        "name": "good", "title": "A kept change", "metric": "answer hit@5", "also": [], "split": "test",
        "rule": 2, "pooled": t["pooled"], "shipped": True, "verdict": verdict, "reason": reason,
        "expected": "kept", "reproduced": True, "corpora": per, "seconds": 1.0, "provenance": {}}))
    (log / "old.toml").write_text(TOML.format(title="An old change", verdict="one corpus only", shipped="false"))
    old = {c: {k: v for k, v in e.items() if k != "per_question"} for c, e in per.items()}
    (log / "results" / "old.json").write_text(json.dumps({
        "name": "old", "title": "An old change", "metric": "answer hit@5", "also": [], "split": "test",
        "verdict": "one corpus only", "reason": "rule 1", "expected": "one corpus only", "reproduced": True,
        "corpora": old, "seconds": 1.0, "provenance": {}}))
    rows = [{"corpus": "demo", "id": str(i), "answered": i > 1, "gap": 0.9 if i <= 1 else 0.2,
             "question_words": 4, "answer_words": 6, "kind": "lookup", "locator": "section"} for i in range(6)]
    (log / "shared-cause.json").write_text(json.dumps({**shared_cause(rows), "metric": "answer hit@5",
                                                       "configurations": {"demo": 2}, "experiments": ["good"]}))
    return log


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    """A handbook of four inline documents (tests/conftest.py), enough for the server to start."""
    from glassrag.config import Config
    from glassrag.indexer import build_index
    from glassrag.store import EmbeddedStore
    from tests.conftest import write_corpus

    folder = tmp_path_factory.mktemp("idx")
    index, _ = build_index([write_corpus(folder / "docs")], Config().with_overrides(lsa={"dim": 4}))
    EmbeddedStore(folder / "index").write(index)
    return folder / "index"


def test_each_experiment_shows_its_verdict_and_the_figure_that_decided_it(log, small_index):
    client = TestClient(create_app([small_index], log=log), base_url="http://127.0.0.1")
    data = client.get("/development.json").json()
    good = next(x for x in data["experiments"] if x["name"] == "good")
    assert good["verdict"] == "kept" and good["shipped"] is True and good["rule"] == 2
    pooled = good["decided_by"]["pooled"]
    # 10 improved against 2 degraded over both corpora: 2 · (1 + 12 + 66) / 4096
    assert pooled["p"] == pytest.approx(2 * (1 + 12 + 66) / 4096) and pooled["n"] == 20
    assert good["decided_by"]["corpora"]["demo"]["diff"] == pytest.approx(0.5)
    old = next(x for x in data["experiments"] if x["name"] == "old")
    assert old["verdict"] == "kept for one set only" and old["rule"] == 1  # rule 1's name, read by its new one
    assert data["cause"]["never"] == [{"corpus": "demo", "id": "0"}, {"corpus": "demo", "id": "1"}]
    page = client.get("/development")
    assert page.status_code == 200
    html = page.text
    assert 'id="verdicts"' in html and "+0.400" in html and "shipped" in html
    assert 'id="cause-figures"' in html and "question words absent from the answering passage" in html
    assert "2 of 6 answerable test questions" in html
    assert "kept for one set only" in html
