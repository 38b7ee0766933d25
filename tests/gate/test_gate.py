import json
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from glassrag.errors import ConfigError
from glassrag.gate.calibrate import auroc, auroc_interval, calibrate, choose, sweep
from glassrag.gate.score import value
from glassrag.gate.threshold import Gate
from glassrag.pipeline import Pipeline


def test_sweep_by_hand():
    rows = sweep([5.0, 7.0, 9.0], [1.0, 6.0], cost=4.0)
    assert [r["threshold"] for r in rows] == [0.0, 3.0, 5.5, 6.5, 8.0, 10.0]
    by_t = {r["threshold"]: r for r in rows}
    assert by_t[5.5]["answerable_kept"] == 2 / 3 and by_t[5.5]["unanswerable_declined"] == 1 / 2
    assert by_t[6.5]["balanced_accuracy"] == (2 / 3 + 2 / 2) / 2
    assert by_t[6.5]["cost"] == pytest.approx(4.0 * (1 / 3) + 0.0)
    assert by_t[3.0]["cost"] == pytest.approx(4.0 * 0 + 1 / 2)


def test_rules():
    rows = sweep([5.0, 7.0, 9.0], [1.0, 6.0])
    assert choose(rows, "balanced")["threshold"] == 6.5
    assert choose(rows, "keep95")["threshold"] == 3.0
    with pytest.raises(ConfigError, match="cost, balanced, keep95"):
        choose(rows, "max")


def test_cost_rule_by_hand():
    rows = sweep([5.0, 7.0, 9.0], [1.0, 6.0], cost=1.0)
    # c = 1: t = 6.5 costs 1/3 (one answer of three lost), t = 3 costs 1/2: 6.5 wins
    assert choose(rows, "cost", 1.0)["threshold"] == 6.5
    # c = 2: t = 6.5 costs 2/3, t = 3 costs 1/2, t = 0 costs 1: 3 wins
    assert choose(rows, "cost", 2.0)["threshold"] == 3.0
    # c = 1.5: 6.5 costs 0.5 and 3 costs 0.5, a tie: the lower threshold keeps more answers
    assert choose(rows, "cost", 1.5)["threshold"] == 3.0


def test_no_hit_counts_as_minus_infinity():
    rows = sweep([5.0, -math.inf], [2.0])
    assert rows[-1]["answerable_kept"] == 0.0 and rows[0]["answerable_kept"] == 0.5


def test_auroc_by_hand_and_against_scikit_learn():
    # pairs (3,1) (3,2) (2,1) win, (2,2) ties: (3 + 0.5) / 4
    assert auroc([3.0, 2.0], [1.0, 2.0]) == pytest.approx(3.5 / 4)
    assert auroc([1.0], [2.0]) == 0.0 and auroc([2.0], [1.0]) == 1.0
    rng = np.random.default_rng(3)
    pos, neg = rng.integers(0, 6, 40).astype(float), rng.integers(0, 5, 25).astype(float)
    expected = roc_auc_score(np.r_[np.ones(40), np.zeros(25)], np.r_[pos, neg])
    assert auroc(pos, neg) == pytest.approx(expected)
    low, high = auroc_interval(pos, neg)
    assert low < auroc(pos, neg) < high and (low, high) == auroc_interval(pos, neg)


def signals(**columns):
    n = len(next(iter(columns.values())))
    return [{k: float(v[i]) for k, v in columns.items()} for i in range(n)]


def test_calibration_needs_unanswerable_questions():
    with pytest.raises(ConfigError, match="cannot be calibrated") as info:
        calibrate(signals(s=[1.0, 2.0]), [], "cost", 5.0, "golden.jsonl")
    assert "answerable\": false" in info.value.hint


def test_a_score_that_cannot_separate_sets_no_threshold():
    rng = np.random.default_rng(0)
    same = rng.normal(size=60)
    cal = calibrate(signals(s=same[:30]), signals(s=same[30:]), "cost", 5.0, "g")
    assert cal["separable"] is False and cal["threshold"] is None
    assert cal["auroc"]["low"] <= 0.5 <= cal["auroc"]["high"]
    gate = Gate(cal, {})
    declined, why = gate.decide({"s": -100.0})
    assert declined is False and "could not tell answerable from unanswerable" in why
    assert gate.decide(None) == (True, "no passage matched the question")


def test_the_cheapest_signal_is_chosen_and_its_threshold_applies():
    good = [0.9, 0.8, 0.85, 0.95, 0.7, 0.75, 0.9, 0.88, 0.92, 0.81]
    bad = [0.1, 0.2, 0.3, 0.15, 0.25, 0.72, 0.05, 0.12, 0.3, 0.2]
    noise = [0.5] * 20
    cal = calibrate(signals(sharp=good, flat=noise[:10]), signals(sharp=bad, flat=noise[10:]),
                    "cost", 5.0, "g")
    assert cal["score"] == {"kind": "signal", "name": "sharp"} and cal["separable"]
    # declining the 0.72 unanswerable would cost the 0.70 answer (cost 5 × 1/10 > 1/10)
    assert cal["threshold"] == pytest.approx((0.3 + 0.7) / 2)
    gate = Gate(cal, {})
    assert gate.decide({"sharp": 0.5, "flat": 0.5}) == (False, "gate score sharp 0.5 ≥ threshold 0.5")
    declined, why = gate.decide({"sharp": 0.4999, "flat": 0.5})
    assert declined and why == "gate score sharp 0.4999 is below the calibrated threshold 0.5"


def test_the_combination_wins_when_no_single_signal_separates():
    # answerable: a + b > 1; unanswerable: a + b < 1; each alone overlaps
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 1, 400)
    b = rng.uniform(0, 1, 400)
    pos, neg = (a + b > 1.1), (a + b < 0.9)
    cal = calibrate(signals(a=a[pos], b=b[pos]), signals(a=a[neg], b=b[neg]), "balanced", 1.0, "g")
    assert cal["score"]["kind"] == "combined" and cal["score"]["names"] == ["a", "b"]
    combined = next(r for r in cal["signals"] if r["signal"] == "combined")
    assert combined["fitted"] and all(combined["auroc"] > r["auroc"] for r in cal["signals"] if not r["fitted"])
    w = cal["score"]["weights"]
    assert w[0] > 0 and w[1] > 0
    assert value(cal["score"], {"a": 0.9, "b": 0.9}) > value(cal["score"], {"a": 0.1, "b": 0.1})
    assert value(cal["score"], {"a": 0.9}) is None  # a missing signal


def test_a_stale_calibration_passes_and_names_the_setting():
    cal = {"score": {"kind": "signal", "name": "s"}, "threshold": 0.5, "rule": "cost", "cost": 5.0,
           "separable": True, "auroc": {"auroc": 0.9, "low": 0.8, "high": 0.95},
           "settings": {"bm25.k1": 1.5, "bm25.b": 0.4}}
    gate = Gate(cal, {"bm25.k1": 0.9, "bm25.b": 0.4})
    declined, why = gate.decide({"s": 0.1})
    assert declined is False and gate.params()["threshold"] is None
    assert "bm25.k1 was 1.5, now 0.9" in why and "run glassrag calibrate again" in why
    assert Gate(None, {}).decide({"s": 0.1}) == (
        False, "not calibrated: run glassrag calibrate to let the gate decline")
    assert Gate(cal, {"bm25.k1": 1.5, "bm25.b": 0.4}).decide({"s": 0.1})[0] is True


def calibrated(pipe, threshold):
    return {"score": {"kind": "signal", "name": "top:bm25"}, "threshold": threshold, "rule": "cost",
            "cost": 5.0, "separable": True, "auroc": {"auroc": 0.9, "low": 0.8, "high": 0.95},
            "settings": pipe.scoring_settings()}


@pytest.mark.parametrize("section, change", [
    ("bm25", {"k1": 0.9}), ("bm25", {"b": 0.75}), ("fuse", {"method": "weighted"}), ("fuse", {"weight": 0.3}),
    ("retrieve", {"retrievers": ["bm25", "lsa"]}), ("retrieve", {"observe": ["lsa"]}),
    ("rerank", {"method": "none"}), ("neural", {"models": ["minilm"]}), ("analyze", {"stopwords": "lucene"}),
    ("mmr", {"relevance": 0.7}), ("answer", {"k": 3}),
])
def test_every_scoring_setting_invalidates_the_calibration(index, section, change):
    from glassrag.rerank.features import FEATURES

    n = len(FEATURES)
    index.extra["reranker"] = {"features": list(FEATURES), "mean": [0.0] * n, "std": [1.0] * n,
                               "weights": [1.0] + [0.0] * (n - 1), "bias": 0.0}
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []},
                                         rerank={"method": "learned"})
    index.extra["gate"] = calibrated(Pipeline(index, config), 1e9)
    assert Pipeline(index, config).run("E-4107 tilt").declined  # valid: declines below 1e9
    changed = Pipeline(index, config.with_overrides(**{section: change}))
    name = f"{section}.{next(iter(change))}"
    assert any(s.startswith(f"{name} was") for s in changed.gate.stale), changed.gate.stale
    answer = changed.run("E-4107 tilt")
    assert not answer.declined and "run glassrag calibrate again" in answer.stage("gate").notes[0]
    assert name in answer.stage("gate").notes[0]


def test_a_retrained_reranker_invalidates_the_calibration(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []},
                                         rerank={"method": "learned"})
    from glassrag.rerank.features import FEATURES

    model = {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "std": [1.0] * len(FEATURES),
             "weights": [1.0] + [0.0] * (len(FEATURES) - 1), "bias": 0.0}
    index.extra["reranker"] = model
    index.extra["gate"] = calibrated(Pipeline(index, config), 1e9)
    assert Pipeline(index, config).gate.stale == []
    index.extra["reranker"] = {**model, "weights": [2.0] + [0.0] * (len(FEATURES) - 1)}
    stale = Pipeline(index, config).gate.stale
    assert len(stale) == 1 and stale[0].startswith("rerank.trained was")


def test_calibrated_gate_in_the_pipeline_and_the_trace(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []})
    pipe = Pipeline(index, config)
    weak_q, strong_q = "quiet hours", "What does E-4107 mean? tilt sensor calibration"
    weak_top = pipe.run(weak_q).stage("bm25").hits[0].score
    strong_top = pipe.run(strong_q).stage("bm25").hits[0].score
    assert weak_top < strong_top
    index.extra["gate"] = calibrated(pipe, (weak_top + strong_top) / 2)
    pipe = Pipeline(index, config)
    weak, strong = pipe.run(weak_q), pipe.run(strong_q)
    assert strong.declined is False and strong.passage is not None
    assert weak.declined and weak.passage is None and weak.also_found  # nearest, listed as such
    assert weak.reason.startswith("the documents do not appear to contain an answer")
    gate = weak.stage("gate")
    assert gate.hits == () and gate.notes[0].startswith("declined: gate score top:bm25")
    assert gate.params["signals"]["top:bm25"] == pytest.approx(weak_top)
    assert set(gate.params["signals"]) >= {"top:bm25", "bm25_norm", "coverage", "term_share", "margin"}
    assert weak.stage("answer").hits == ()
    assert weak.quote.found is False
    json.dumps(weak.to_dict())
