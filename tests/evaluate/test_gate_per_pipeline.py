"""Issue 47, item 2: a calibration follows the pipeline it was made for (a hybrid keeps its own
beside the default's: gate/threshold.py `fitting` and `kept`), and a handful of on-topic
unanswerable train questions does not place the first threshold by chance (evaluate/tune.py
`left_out`): it is fitted against the off-topic questions alone, and calibrate says why. On the
four-file handbook.""" 

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.fits import mismatch
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.tune import calibrate_index
from glassrag.gate.calibrate import MIN_PER_CLASS
from glassrag.gate.threshold import KEPT, declines, fitting, kept
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.schema.fitted import read_extra
from tests.conftest import HANDBOOK_QUESTIONS

CONFIG = Config().with_overrides(retrieve={"retrievers": ["bm25"]}, answer={"k": 2},
                                 rerank={"method": "none"}, gate={"offtopic": False})
K1 = CONFIG.with_overrides(bm25={"k1": 0.9})
OTHER = K1.with_overrides(bm25={"b": 0.9})
QUESTIONS = [*HANDBOOK_QUESTIONS, Question("gym", "gym membership price", False, split="train")]


@pytest.fixture
def two(corpus: Path):
    """The index calibrated for CONFIG, then for K1 (as `glassrag calibrate` keeps them)."""
    index, _ = build_index([corpus], CONFIG)
    first, _ = calibrate_index(index, CONFIG, QUESTIONS, "cost", "hand.jsonl")
    second, _ = calibrate_index(index, K1, QUESTIONS, "cost", "hand.jsonl")
    extra = {**index.extra, "gate": first}
    extra = {**extra, "gate": second, "gates": kept(extra, second)}
    return replace(index, extra=read_extra(extra)), first, second


def test_each_pipeline_reads_the_calibration_made_for_it(two):
    index, first, second = two
    assert index.extra["gate"] == second and index.extra["gates"] == [first]
    for config, own in ((CONFIG, first), (K1, second)):
        pipeline = Pipeline(index, config)
        assert pipeline.gate.stale == [] and pipeline.gate.calibration == own
        assert mismatch(index, config) == []
    assert mismatch(index, OTHER) == ["bm25.b was 0.4, now 0.9"]  # made for neither: the current one is named
    assert Pipeline(index, OTHER).gate.stale == ["bm25.b was 0.4, now 0.9"]


def test_calibrating_the_same_settings_again_replaces_and_the_list_is_bounded(two):
    index, first, second = two
    again = {**first, "threshold": -1.0}
    assert kept(index.extra, again) == [second]  # the old one for CONFIG is gone, K1's kept
    many = {"gate": second, "gates": [{**first, "settings": {**first["settings"], "bm25.k1": 0.1 * i}}
                                      for i in range(1, 2 * KEPT)]}
    assert len(kept(many, first)) == KEPT
    assert fitting({}, first["settings"]) is None


def offtopic_run(corpus: Path, on_topic: list[Question], on_topic_min: int = MIN_PER_CLASS):
    """Calibrated with the bundled off-topic questions beside `on_topic` and six found answers;
    the answerability model is left out (lexical signals decide, and the test is quick)."""
    config = CONFIG.with_overrides(gate={"offtopic": True, "answerability": "none", "on_topic_min": on_topic_min},
                                   answer={"k": 1})
    found = [
        Question("s1", "What does E-4107 mean?", True, split="train", answers=(Span("manual", "§ 2.1 Sensor errors"),)),
        Question("s2", "tilt sensor lost calibration", True, split="train",
                 answers=(Span("manual", "§ 2.1 Sensor errors"),)),
        Question("b1", "battery below ten percent", True, split="train", answers=(Span("manual", "§ 2.2 Power errors"),)),
        Question("b2", "What does E-2210 mean?", True, split="train", answers=(Span("manual", "§ 2.2 Power errors"),)),
        Question("m1", "mirror motor overheating", True, split="train", answers=(Span("scanner", "§ 1. Errors"),)),
        Question("m2", "What does E-4170 mean?", True, split="train", answers=(Span("scanner", "§ 1. Errors"),)),
        Question("t1", "level it with the circular bubble", True, split="train",
                 answers=(Span("manual", "§ 1. Setup"),)),
    ]
    index, _ = build_index([corpus], config)
    return calibrate_index(index, config, [*found, *on_topic], "cost", "hand.jsonl")[0]


ON_TOPIC = [Question(f"u{i}", text, False, split="train", kind="unanswerable") for i, text in enumerate([
    "tripod rental price", "scanner warranty length in years", "how heavy is the TX-2000 scanner",
    "Lisbon hotel booking portal", "firmware download link for the fleet server", "mileage rate for electric bikes"])]


def test_a_handful_of_on_topic_questions_is_left_out_of_the_first_threshold(corpus: Path):
    gate = offtopic_run(corpus, ON_TOPIC[:2])
    q = gate["questions"]
    assert q["offtopic"] > 0 and gate["unanswerable_by_topic"]["on-topic"]["questions"] == 2
    # fitted on found answers against the off-topic ones only, unweighted
    assert gate["n_unanswerable"] == q["offtopic"] - q["no_match_offtopic"] and gate["weighted"] is False
    assert gate["on_topic_left_out"] == 2 and gate["threshold"] is not None and gate["separable"] is True
    assert gate["on_topic_why"] == (f"only 2 unanswerable train question(s) on hand.jsonl's own topic, fewer than the "
                                    f"{MIN_PER_CLASS} a threshold needs to be fitted on them (gate.on_topic_min)")
    warning = next(w for w in gate["warnings"] if w.startswith("the first threshold was fitted against the off-topic"))
    assert f"Add at least {MIN_PER_CLASS - 2} more questions" in warning
    # the gate still declines what matches nothing of the question
    low = {name: 0.0 for name in gate["score"]["names"]} if gate["score"]["kind"] == "combined" else {
        gate["score"]["name"]: -1e9}
    assert declines(gate, low)


def test_enough_on_topic_questions_place_it(corpus: Path):
    gate = offtopic_run(corpus, ON_TOPIC[:MIN_PER_CLASS])
    assert "on_topic_left_out" not in gate and gate["unanswerable_by_topic"]["on-topic"]["questions"] == MIN_PER_CLASS
    assert gate["weighted"] is True and gate["n_unanswerable"] > gate["questions"]["offtopic"] - gate["questions"][
        "no_match_offtopic"]
    assert not any(w.startswith("the first threshold was fitted against") for w in gate["warnings"])
    assert gate["on_topic_min"] == MIN_PER_CLASS == Config().gate.on_topic_min


def test_gate_on_topic_min_0_always_places_it_and_a_change_is_a_mismatch(corpus: Path):
    gate = offtopic_run(corpus, ON_TOPIC[:2], on_topic_min=0)
    assert "on_topic_left_out" not in gate and gate["on_topic_min"] == 0 and gate["weighted"] is True
    index, _ = build_index([corpus], CONFIG)
    made = replace(index, extra={**index.extra, "gate": gate})
    config = CONFIG.with_overrides(gate={"offtopic": True, "answerability": "none"}, answer={"k": 1})
    assert "gate.on_topic_min was 0, now 5" in mismatch(made, config)
    assert not [m for m in mismatch(made, config) if m.startswith("gate.signals")]
    other = config.with_overrides(gate={"signals": ["answerability", "margin"]})
    assert ("gate.signals was ['answerability', 'bm25_norm', 'term_share', 'coverage', 'known_share', 'margin'], "
            "now ['answerability', 'margin']") in mismatch(made, other)
    old = replace(made, extra={**made.extra, "gate": {k: v for k, v in gate.items() if k != "combined_signals"}})
    # made before it was recorded: it read the five signals of calibrate.COMBINED
    five = config.with_overrides(gate={"signals": ["answerability", "bm25_norm", "term_share", "coverage", "known_share"]})
    assert not [m for m in mismatch(old, five) if m.startswith("gate.signals")]
    assert [m for m in mismatch(old, config) if m.startswith("gate.signals")]
