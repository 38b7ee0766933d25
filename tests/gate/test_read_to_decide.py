"""The gate reading the answerability model only as far as its decision needs
(gate/stage.py `read_to_decide`): on the calibrated demo it takes every decision reading all
passages takes, reading fewer; on chosen calibrations, each way it stops."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.gate import answerability
from glassrag.gate.stage import GateStage
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.rerank.cross_onnx import bundled_folder

AUROC = {"auroc": 0.9, "low": 0.8, "high": 0.95}


def calibration(score: dict[str, Any], threshold: float, offtopic: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"score": score, "threshold": threshold, "separable": True, "auroc": AUROC, "settings": {},
            **({"offtopic_gate": offtopic} if offtopic else {})}


ON_ITS_OWN = {"kind": "signal", "name": "answerability"}
# answerability and coverage on one scale: 0.5 · a + 4 · coverage
WITH_COVERAGE = {"kind": "combined", "names": ["answerability", "coverage"], "mean": [0.0, 0.0], "std": [2.0, 1.0],
                 "weights": [1.0, 4.0], "bias": 0.0}


def gate(cal: dict[str, Any], depth: int = 5, folder: Path | None = None) -> GateStage:
    model = answerability.Answerability(folder or bundled_folder(), depth)
    return GateStage(cal, {}, None, None, 3, model, "digest", read_to_decide=True)


def reading(logits: list[float]):
    """The model's logits of the passages in rank order, and the list of those read."""
    read: list[str] = []

    def score(chunk_id: str) -> float:
        read.append(chunk_id)
        return logits[int(chunk_id)]

    return score, read


def test_it_reads_until_the_best_so_far_passes():
    g = gate(calibration(ON_ITS_OWN, 0.0))
    score, read = reading([-1.0, 2.0, 3.0, 4.0])
    assert g.read_enough({}, ["0", "1", "2", "3"], score) == {"answerability": 2.0, "answerability_read": 2}
    assert read == ["0", "1"]
    declined, why = g.decide({"answerability": 2.0})
    assert not declined
    assert "read 2 of the top 5 passages" in g.how_far({"answerability": 2.0, "answerability_read": 2}, declined)


def test_a_declined_question_reads_every_passage_and_keeps_the_whole_signals():
    g = gate(calibration(ON_ITS_OWN, 0.0))
    score, read = reading([-1.0, -3.0, -0.5])
    got = g.read_enough({}, ["0", "1", "2"], score)
    assert got == {**answerability.signals([-1.0, -3.0, -0.5]), "answerability_read": 3}
    assert read == ["0", "1", "2"] and g.decide(got)[0]


def test_a_pass_at_the_last_passage_is_a_reading_to_the_end():
    g = gate(calibration(ON_ITS_OWN, 0.0))
    score, read = reading([-1.0, -2.0, 3.0])
    assert g.read_enough({}, ["0", "1", "2"], score) == {**answerability.signals([-1.0, -2.0, 3.0]),
                                                          "answerability_read": 3}
    assert not g.cut_short({**answerability.signals([-1.0, -2.0, 3.0]), "answerability_read": 3})


def test_when_no_logit_in_the_bounds_changes_the_decision_nothing_is_read():
    g = gate(calibration(WITH_COVERAGE, 1.0))
    low, high = g.answerability.bounds
    score, read = reading([5.0, 5.0])
    # 0.5 a + 4 ≥ 1 for every a ≥ -6 and a ≥ low (about -7.2)? no: this one must read
    assert low < -6
    assert g.read_enough({"coverage": 1.0}, ["0", "1"], score) == {"answerability": 5.0, "answerability_read": 1}
    # 0.5 a + 8 ≥ 1 down to a = -14, below the bounds: passes unread, at the low bound
    assert g.read_enough({"coverage": 2.0}, ["0", "1"], score) == {"answerability": low, "answerability_read": 0}
    # 0.5 a - 4 < 1 up to a = 10, above the bounds: declined unread, at the high bound
    assert g.read_enough({"coverage": -1.0}, ["0", "1"], score) == {"answerability": high, "answerability_read": 0}
    assert read == ["0"]
    declined, _ = g.decide({"coverage": -1.0, "answerability": high})
    assert declined and g.how_far({"answerability_read": 0}, declined).endswith(
        f"read none of the top 5 passages: any logit it can give ({low:.3g} to {high:.3g}) declines")
    assert g.how_far({"answerability_read": 0}, False).endswith(") passes")


def test_the_off_topic_threshold_counts_too():
    # the first threshold passes anything; the second needs a logit of 1
    g = gate(calibration(ON_ITS_OWN, -100.0, {"score": ON_ITS_OWN, "threshold": 1.0, "keep": 0.98}))
    score, read = reading([0.0, 1.5, 3.0])
    assert g.read_enough({}, ["0", "1", "2"], score) == {"answerability": 1.5, "answerability_read": 2}


def test_a_model_without_recorded_bounds_reads_at_least_one_passage(tmp_path: Path):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("model.int8.onnx", "tokenizer.json"):
        (folder / name).symlink_to(bundled_folder() / name)
    g = gate(calibration(WITH_COVERAGE, 1.0), folder=folder)
    assert g.answerability.bounds is None
    score, read = reading([-10.0, 5.0])  # with the bundled model's bounds this would pass unread
    assert g.read_enough({"coverage": 2.0}, ["0", "1"], score) == {"answerability": -10.0, "answerability_read": 1}


@pytest.mark.parametrize("score, offtopic", [
    ({**WITH_COVERAGE, "weights": [-1.0, 4.0]}, None),  # the score falls as the logit rises
    (ON_ITS_OWN, {"score": {"kind": "signal", "name": "answerability_margin"}, "threshold": 0.0, "keep": 0.98}),
    ({"kind": "signal", "name": "answerability_margin"}, None),
])
def test_a_score_that_does_not_rise_with_the_logit_reads_every_passage(score, offtopic):
    assert not gate(calibration(score, 0.0, offtopic)).read_to_decide
    assert gate(calibration(WITH_COVERAGE, 0.0)).read_to_decide
    # a weight of 0: the score does not move with the logit, any reading decides alike
    assert gate(calibration({**WITH_COVERAGE, "weights": [0.0, 4.0]}, 0.0)).read_to_decide
    # only when asked: evaluation and calibration read every passage
    model = answerability.Answerability(bundled_folder(), 5)
    assert not GateStage(calibration(WITH_COVERAGE, 0.0), {}, None, None, 3, model, "digest").read_to_decide


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    """The demo index as `glassrag demo` builds it: reranker trained, gate calibrated on train
    (its score reads the answerability model)."""
    config = Config()
    index, _ = build_index([demo_docs()], config)
    questions = load_golden(demo_golden())
    index.extra["reranker"] = train_reranker(index, config, questions, str(demo_golden()))
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions, "cost",
                                                                 str(demo_golden()))
    assert answerability.read_by(index.extra["gate"])
    return index


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_on_the_demo_every_decision_is_the_one_reading_every_passage_takes(demo):
    questions = [q.question for q in load_golden(demo_golden())]
    questions += ["Who painted the Mona Lisa?", "What is the capital of Australia?",
                  " ".join(f"E-{4100 + j} TX-{2000 + j % 50}" for j in range(400))[:4000]]
    passes = {}
    for to_decide in (False, True):
        answerability._SCORED.clear()
        pipeline = Pipeline(demo, read_to_decide=to_decide)
        answers = [pipeline.run(q) for q in questions]
        passes[to_decide] = (answers, len(answerability._SCORED))
    (whole, scored_whole), (enough, scored_enough) = passes[False], passes[True]
    depth = Config().gate.answerability_depth
    counts = []
    for a, b in zip(whole, enough):
        assert (a.declined, a.passage, a.also_found) == (b.declined, b.passage, b.also_found), a.question
        full = next(t for t in a.trace if t.kind == "gate").params["signals"]
        part = next(t for t in b.trace if t.kind == "gate").params["signals"]
        if not full:
            continue  # nothing matched: nothing to read either way
        read = part.pop("answerability_read")
        counts.append(read)
        why = next(t for t in b.trace if t.kind == "gate").notes[0]
        if "answerability_margin" in part:
            assert part == full  # read to the end, the signals are the whole ones, and so is the reason
            assert why == next(t for t in a.trace if t.kind == "gate").notes[0]
        elif b.declined:  # declined unread: at the highest logit, a score the question's cannot exceed
            assert read == 0 and "score combined (" in why and ") at most " in why and "read none of" in why
        else:  # passed at the best so far (or the lowest logit): a floor of the question's score
            assert part["answerability"] <= full["answerability"]
            assert ") at least " in why and ("read none of" in why if read == 0 else f"read {read} of" in why)
    assert 0 in counts and 1 in counts and depth in counts  # each way of stopping happens on the demo
    assert scored_enough == sum(counts) < scored_whole / 2
