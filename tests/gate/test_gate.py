import json
import math

import pytest

from glassrag.errors import ConfigError
from glassrag.gate.calibrate import calibrate, choose, sweep
from glassrag.gate.threshold import Gate, fingerprint
from glassrag.pipeline import Pipeline


def test_sweep_by_hand():
    rows = sweep([5.0, 7.0, 9.0], [1.0, 6.0])
    assert [r["threshold"] for r in rows] == [0.0, 3.0, 5.5, 6.5, 8.0, 10.0]
    by_t = {r["threshold"]: r for r in rows}
    assert by_t[5.5]["answerable_kept"] == 2 / 3 and by_t[5.5]["unanswerable_declined"] == 1 / 2
    assert by_t[6.5]["balanced_accuracy"] == (2 / 3 + 2 / 2) / 2


def test_rules():
    rows = sweep([5.0, 7.0, 9.0], [1.0, 6.0])
    assert choose(rows, "balanced")["threshold"] == 6.5
    assert choose(rows, "keep95")["threshold"] == 3.0
    with pytest.raises(ConfigError, match="balanced, keep95"):
        choose(rows, "max")


def test_no_hit_counts_as_minus_infinity():
    rows = sweep([5.0, -math.inf], [2.0])
    assert rows[-1]["answerable_kept"] == 0.0 and rows[0]["answerable_kept"] == 0.5


def test_calibration_needs_unanswerable_questions():
    with pytest.raises(ConfigError, match="cannot be calibrated") as info:
        calibrate([1.0, 2.0], [], "balanced", "golden.jsonl")
    assert "answerable\": false" in info.value.hint


def test_gate_declines_below_the_threshold():
    params = {"k1": 1.5, "b": 0.4}
    cal = {"threshold": 6.5, "rule": "balanced", "fingerprint": fingerprint("bm25", params)}
    gate = Gate(cal, "bm25", params)
    assert gate.decide(6.0) == (True, "top bm25 score 6 is below the calibrated threshold 6.5")
    assert gate.decide(7.0)[0] is False
    assert gate.decide(None) == (True, "no passage matched the question")


def test_another_scoring_stage_invalidates_the_threshold():
    cal = {"threshold": 6.5, "rule": "balanced", "fingerprint": fingerprint("bm25", {"k1": 1.5, "b": 0.4})}
    gate = Gate(cal, "bm25", {"k1": 0.9, "b": 0.4})
    declined, why = gate.decide(0.1)
    assert declined is False and gate.threshold is None
    assert "scores shifted, run glassrag calibrate again" in why
    assert Gate(None, "bm25", {}).decide(0.1) == (
        False, "not calibrated: run glassrag calibrate to let the gate decline")


def test_calibrated_gate_in_the_pipeline_and_the_trace(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []})
    pipe = Pipeline(index, config)
    stage, params = pipe._scoring_stage()
    assert stage == "bm25"
    weak_q, strong_q = "quiet hours", "What does E-4107 mean? tilt sensor calibration"
    weak_top = pipe.run(weak_q).stage("bm25").hits[0].score
    strong_top = pipe.run(strong_q).stage("bm25").hits[0].score
    assert weak_top < strong_top
    index.extra["gate"] = {"threshold": (weak_top + strong_top) / 2, "rule": "balanced",
                           "fingerprint": fingerprint(stage, params)}
    pipe = Pipeline(index, config)
    weak, strong = pipe.run(weak_q), pipe.run(strong_q)
    assert strong.declined is False and strong.passage is not None
    assert weak.declined and weak.passage is None and weak.also_found  # nearest, listed as such
    assert weak.reason.startswith("the documents do not appear to contain an answer")
    assert weak.stage("gate").hits == () and weak.stage("gate").notes[0].startswith("declined")
    assert weak.stage("answer").hits == ()
    assert weak.quote.found is False
    json.dumps(weak.to_dict())
