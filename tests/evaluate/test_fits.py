"""A comparison of settings never measures a gate that was silently switched off (issue 27,
item 4): `eval` calibrates a configuration its index's calibration does not fit, or the run
says loudly that the gate was off; `compare` does not put a difference after the gate down
to the settings when one run's gate was uncalibrated (evaluate/fits.py, evaluate/compare.py).
On the four-file handbook with BM25 alone and without the bundled off-topic questions."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.compare import compare_runs
from glassrag.evaluate.fits import calibrated_for, mismatch, status_of
from glassrag.evaluate.golden import Question
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.tune import calibrate_index
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.store.base import Index
from tests.conftest import HANDBOOK_QUESTIONS

CONFIG = Config().with_overrides(retrieve={"retrievers": ["bm25"]}, answer={"k": 2},
                                 rerank={"method": "none"}, gate={"offtopic": False})
K1 = CONFIG.with_overrides(bm25={"k1": 0.9})
QUESTIONS = [*HANDBOOK_QUESTIONS, Question("gym", "gym membership price", False)]


@pytest.fixture
def calibrated(corpus: Path) -> Index:
    index, _ = build_index([corpus], CONFIG)
    gate, reader = calibrate_index(index, CONFIG, QUESTIONS, CONFIG.gate.rule, "hand.jsonl")
    return replace(index, extra={**index.extra, "gate": gate, "reader": reader})


def test_mismatch_names_each_changed_setting_and_a_changed_rule_or_cost(calibrated):
    assert mismatch(calibrated, CONFIG) == []
    assert mismatch(calibrated, K1) == ["bm25.k1 was 1.5, now 0.9"]
    assert mismatch(calibrated, CONFIG.with_overrides(gate={"cost": 9.0})) == ["gate.cost was 2.5, now 9.0"]
    assert mismatch(calibrated, CONFIG.with_overrides(gate={"rule": "balanced"})) == [
        "gate.rule was 'cost', now 'balanced'"]
    assert mismatch(calibrated, CONFIG.with_overrides(gate={"score": "auto"})) == [
        "gate.score was 'combined', now 'auto'"]
    assert mismatch(calibrated, CONFIG.with_overrides(gate={"offtopic_keep": 0.9})) == [
        f"gate.offtopic_keep was {CONFIG.gate.offtopic_keep}, now 0.9"]
    # made without the bundled off-topic questions: asking with them (or the reverse) is another calibration
    assert mismatch(calibrated, CONFIG.with_overrides(gate={"offtopic": True})) == [
        "gate.offtopic was false, now true"]
    with_offtopic = {**calibrated.extra["gate"], "questions": {**calibrated.extra["gate"]["questions"], "offtopic": 185}}
    assert mismatch(replace(calibrated, extra={**calibrated.extra, "gate": with_offtopic}), CONFIG) == [
        "gate.offtopic was true, now false"]
    # a calibration stored before gate.score existed chose by auto
    before = {k: v for k, v in calibrated.extra["gate"].items() if k != "score_mode"}
    assert mismatch(replace(calibrated, extra={**calibrated.extra, "gate": before}), CONFIG) == [
        "gate.score was 'auto', now 'combined'"]
    assert mismatch(replace(calibrated, extra={}), K1) == []  # nothing calibrated: nothing to mismatch


def test_a_configuration_the_calibration_does_not_fit_is_calibrated_on_train(calibrated):
    same, failed = calibrated_for(calibrated, CONFIG, QUESTIONS, "hand.jsonl")
    assert same is calibrated and failed is None
    made, failed = calibrated_for(calibrated, K1, QUESTIONS, "hand.jsonl")
    assert failed is None and made is not calibrated and made.chunks is calibrated.chunks
    gate, reader = calibrate_index(calibrated, K1, QUESTIONS, K1.gate.rule, "hand.jsonl")
    assert made.extra["gate"] == {**gate, "fitted_here": "hand.jsonl"} and made.extra["reader"] == reader
    assert "fitted_here" not in calibrated.extra["gate"]  # the index itself is untouched
    assert Pipeline(made, K1).gate.stale == []


def test_without_an_unanswerable_train_question_the_failure_is_said(calibrated):
    answerable = [q for q in QUESTIONS if q.answerable]
    index, failed = calibrated_for(calibrated, K1, answerable, "hand.jsonl")
    assert index is calibrated and failed.startswith("calibrating for these settings failed: ")


@pytest.mark.parametrize("setup, status, said", [
    ("fits", "index", "fits these settings"),
    ("recalibrated", "train", "calibrated for these on the train split of hand.jsonl (not saved"),
    ("stale", "stale", "the gate was OFF: the index's calibration was made for other settings "
                       "(bm25.k1 was 1.5, now 0.9)"),
    ("never", "none", "never calibrated"),
    ("off", "off", "gate.enabled = false"),
])
def test_every_run_records_its_gate_s_calibration(calibrated, setup, status, said):
    index, config = {
        "fits": (calibrated, CONFIG),
        "recalibrated": (calibrated_for(calibrated, K1, QUESTIONS, "hand.jsonl")[0], K1),
        "stale": (calibrated, K1),
        "never": (replace(calibrated, extra={}), K1),
        "off": (calibrated, K1.with_overrides(gate={"enabled": False})),
    }[setup]
    run = evaluate(Pipeline(index, config), QUESTIONS, "hand.jsonl", "all")
    record = run.gate["calibration"]
    assert record["status"] == status and said in record["note"] and status_of(run.gate) == status


def test_compare_does_not_blame_the_settings_for_an_uncalibrated_gate(calibrated):
    base = evaluate(Pipeline(calibrated, CONFIG), QUESTIONS, "hand.jsonl", "all").to_dict()
    stale = evaluate(Pipeline(calibrated, K1), QUESTIONS, "hand.jsonl", "all").to_dict()
    result = compare_runs(base, stale, "A", "B")
    assert result["gates"]["a"]["status"] == "index" and result["gates"]["b"]["status"] == "stale"
    assert result["gate_warning"].startswith("B's gate was stale: the figures after the gate")
    after = [r for r in result["rows"] if r["section"] == "answer"]
    before = [r for r in result["rows"] if r["section"] == "ranking"]
    assert after and all(r["verdict"] == "not comparable" and r["confounded"] == "B's gate was stale"
                         for r in after)
    assert before and all(r["verdict"] in ("better", "worse", "same") and "confounded" not in r for r in before)
    assert result["flips"]["answer declined_unanswerable"]["confounded"] == "B's gate was stale"
    # calibrated for B's settings, the same comparison attributes again
    made, _ = calibrated_for(calibrated, K1, QUESTIONS, "hand.jsonl")
    fitted = evaluate(Pipeline(made, K1), QUESTIONS, "hand.jsonl", "all").to_dict()
    result = compare_runs(base, fitted, "A", "B")
    assert result["gate_warning"] is None and result["gates"]["b"]["status"] == "train"
    assert not any(r.get("confounded") for r in result["rows"])
    # both uncalibrated: alike, said, nothing marked
    never = evaluate(Pipeline(replace(calibrated, extra={}), CONFIG), QUESTIONS, "hand.jsonl", "all").to_dict()
    result = compare_runs(never, stale, "A", "B")
    assert result["gate_warning"].startswith("A's gate was none; B's gate was stale: neither gate was calibrated")
    assert not any(r.get("confounded") for r in result["rows"])


def test_a_run_file_from_before_the_record_is_unknown_and_not_flagged(calibrated):
    base = evaluate(Pipeline(calibrated, CONFIG), QUESTIONS, "hand.jsonl", "all").to_dict()
    old = json.loads(json.dumps(base))
    del old["gate"]["calibration"]
    assert status_of(old["gate"]) == ("index" if old["gate"]["params"]["threshold"] is not None else "unknown")
    result = compare_runs(base, old, "A", "B")
    assert result["gate_warning"] is None


def _cli(*args: object) -> "subprocess.CompletedProcess[str]":
    import subprocess

    return subprocess.run([sys.executable, "-m", "glassrag.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@pytest.mark.slow
def test_eval_with_other_settings_calibrates_them_or_says_the_gate_was_off(corpus: Path, tmp_path: Path):
    idx, golden = tmp_path / "idx", tmp_path / "golden.jsonl"
    rows = [{"id": q.id, "question": q.question, "split": q.split, "answerable": q.answerable,
             "answers": [{"doc": s.doc, "locator": s.locator} for s in q.answers]} for q in QUESTIONS]
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = tmp_path / "base.toml"
    base.write_text('[retrieve]\nretrievers = ["bm25"]\n[rerank]\nmethod = "none"\n[gate]\nofftopic = false\n')
    other = tmp_path / "k1.toml"
    other.write_text(base.read_text() + "[bm25]\nk1 = 0.9\n")
    assert _cli("ingest", corpus, "--index", idx).returncode == 0
    assert _cli("calibrate", "--index", idx, "--golden", golden, "--config", base).returncode == 0
    r = _cli("eval", "--index", idx, "--golden", golden, "--config", other, "--out", tmp_path / "k1.json")
    assert r.returncode == 0, r.stderr
    assert "gate: the index's calibration was made for other settings, so the gate and the reader were " \
           "calibrated for these on the train split" in " ".join(r.stdout.split())
    assert json.loads((tmp_path / "k1.json").read_text())["gate"]["calibration"]["status"] == "train"
    r = _cli("eval", "--index", idx, "--golden", golden, "--config", other, "--no-calibrate",
             "--out", tmp_path / "stale.json")
    assert r.returncode == 0, r.stderr
    assert "warning gate stale: the gate was OFF" in " ".join(r.stderr.split())
    r = _cli("eval", "--index", idx, "--golden", golden, "--config", base, "--out", tmp_path / "base.json")
    assert r.returncode == 0 and "gate stale" not in r.stderr
    r = _cli("compare", tmp_path / "base.json", tmp_path / "stale.json")
    assert r.returncode == 0, r.stderr
    said = " ".join((r.stdout + r.stderr).split())
    assert "B's gate: stale" in said and "not comparable" in said
    assert "warning" in said and "gate was stale: the figures after the gate" in said
    assert "declined_unanswerable: better in B" not in said and "declined_unanswerable: worse in B" not in said
