"""The gate's boundaries, each written so that flipping it fails a test: the threshold
(declined below it, kept at it), the rules' tie-breaks, keep95's 95 % exactly, the
candidate tie-break, the minimum class size and the stale check (gate/threshold.py,
gate/calibrate.py)."""

from __future__ import annotations

import math

import pytest

from glassrag.gate.calibrate import MIN_PER_CLASS, auroc, beats, calibrate, candidate, choose, objective, sweep
from glassrag.gate.threshold import Gate, changed

CAL = {"score": {"kind": "signal", "name": "s"}, "threshold": 0.25, "rule": "cost", "cost": 5.0,
       "separable": True, "auroc": {"auroc": 0.9, "low": 0.8, "high": 0.95}, "settings": {"bm25.k1": 1.5}}


def rows(*triples):
    return [{"threshold": t, "answerable_kept": k, "unanswerable_declined": d} for t, k, d in triples]


@pytest.mark.parametrize("score,declined", [
    (0.25, False),                          # exactly at the threshold: kept (declined ⇔ score < t)
    (math.nextafter(0.25, 0), True),        # the next float below: declined
    (math.nextafter(0.25, 1), False),
    (-math.inf, True),
])
def test_declined_exactly_below_the_threshold(score, declined):
    got, why = Gate(CAL, {"bm25.k1": 1.5}).decide({"s": score})
    assert got is declined
    assert ("below the calibrated threshold" in why) is declined


def test_an_inactive_gate_passes_everything_and_says_why():
    for cal, settings, expected in [
        (None, {}, "not calibrated"),
        (CAL, {"bm25.k1": 0.9}, "bm25.k1 was 1.5, now 0.9"),
        ({**CAL, "separable": False}, {"bm25.k1": 1.5}, "declines nothing"),
        ({**CAL, "threshold": None}, {"bm25.k1": 1.5}, "declines nothing"),
    ]:
        gate = Gate(cal, settings)
        declined, why = gate.decide({"s": -100.0})
        assert declined is False and expected in why and not gate.active
    gate = Gate(CAL, {"bm25.k1": 1.5})
    assert gate.active and gate.decide({"t": 1.0}) == (
        False, "a signal of the gate's score (s) is missing: run glassrag calibrate again")


def test_stale_lists_at_most_four_settings_and_counts_the_rest():
    was = {f"s{i}": i for i in range(6)}
    gate = Gate({**CAL, "settings": was}, {f"s{i}": i + 1 for i in range(6)})
    why = gate.decide({"s": 1.0})[1]
    assert "s3 was 3, now 4; and 2 more)" in why and "s4 was" not in why
    assert changed({"a": 1}, {"a": 1}) == [] and changed({"a": 1}, {}) == ["a was 1, now null"]


def test_the_cost_rule_breaks_a_tie_towards_the_lower_threshold():
    """Equal cost at t = 1.5 and t = 3.5: the lower keeps more answers."""
    swept = sweep([2.0, 4.0], [1.0, 3.0], cost=1.0)
    costs = {r["threshold"]: r["cost"] for r in swept}
    assert costs[1.5] == costs[3.5] == min(costs.values()) == 0.5
    assert choose(swept, "cost", 1.0)["threshold"] == 1.5
    assert choose(swept, "balanced")["threshold"] == 1.5
    assert choose(list(reversed(swept)), "cost", 1.0)["threshold"] == 1.5


def test_the_cost_weighs_the_lost_answers_by_c():
    r = rows((0.0, 0.75, 0.5))[0]
    assert objective(r, "cost", 4.0) == 4.0 * 0.25 + 0.5
    assert objective(r, "balanced", 4.0) == 0.25 + 0.5
    assert objective(r, "keep95", 4.0) == 0.5


def test_keep95_keeps_exactly_95_percent():
    table = rows((1.0, 1.0, 0.0), (2.0, 0.95, 0.5), (3.0, 0.9499, 0.9))
    assert choose(table, "keep95")["threshold"] == 2.0
    assert choose(rows((1.0, 1.0, 0.0), (2.0, 0.96, 0.5)), "keep95")["threshold"] == 2.0


def test_sweep_counts_a_score_equal_to_the_threshold_as_kept():
    """Thresholds are midpoints, so no observed score equals one; at the outer cuts the
    score sits 1 away: kept at the lowest cut, declined at the highest."""
    swept = sweep([1.0], [1.0])
    assert [r["threshold"] for r in swept] == [0.0, 2.0]
    assert (swept[0]["answerable_kept"], swept[0]["unanswerable_declined"]) == (1.0, 0.0)
    assert (swept[1]["answerable_kept"], swept[1]["unanswerable_declined"]) == (0.0, 1.0)
    assert sweep([], []) == [{"threshold": 0.0, "answerable_kept": 0.0, "unanswerable_declined": 0.0,
                              "balanced_accuracy": 0.0, "cost": 2.0}]


def test_auroc_ties_count_half():
    assert auroc([1.0], [1.0]) == 0.5
    assert auroc([2.0, 1.0], [1.0]) == (1 + 0.5) / 2
    assert math.isnan(auroc([], [1.0])) and math.isnan(auroc([1.0], []))


def col(values):
    return [{"s": float(v)} for v in values]


def test_the_minimum_class_size_is_inclusive():
    """With MIN_PER_CLASS of each the gate may separate; with one fewer it may not."""
    n = MIN_PER_CLASS
    enough = calibrate(col(range(10, 10 + n)), col(range(n)), "cost", 1.0, "g")
    assert enough["separable"] and enough["threshold"] == (n - 1 + 10) / 2 and enough["why"] == ""
    few = calibrate(col(range(10, 10 + n - 1)), col(range(n)), "cost", 1.0, "g")
    assert not few["separable"] and few["threshold"] is None
    assert few["why"].startswith(f"too few train questions to tell: {n - 1} found answers")


def test_candidates_tie_on_cost_then_the_higher_auroc_wins():
    """The least cost wins; on equal cost the higher AUROC; on equal AUROC the name."""
    pos = [{"a": 10.0 + i, "b": 10.0 + i, "c": 10.0 + i} for i in range(6)]
    neg = [{"a": float(i), "b": float(i), "c": float(i)} for i in range(6)]
    pos[0]["b"] = 2.5  # one answerable among the unanswerable: b costs more and ranks worse
    cal = calibrate(pos, neg, "cost", 1.0, "g")
    assert cal["score"] == {"kind": "signal", "name": "a"}  # a and c tie on cost and AUROC: by name
    order = [r["signal"] for r in cal["signals"]]
    assert order.index("a") < order.index("c") < order.index("b")
    # four of each (fewer than the folds a combination needs): hi's odd unanswerable sits
    # inside the answerables, lo's above them all; keep95 answers it with either signal
    pos2 = [{"hi": 10.0 + i, "lo": 10.0 + i} for i in range(4)]
    neg2 = [{"hi": float(i), "lo": float(i)} for i in range(4)]
    neg2[0]["hi"], neg2[0]["lo"] = 10.5, 100.0
    cal = calibrate(pos2, neg2, "keep95", 1.0, "g")
    hi = next(r for r in cal["signals"] if r["signal"] == "hi")
    lo = next(r for r in cal["signals"] if r["signal"] == "lo")
    assert hi["objective"] == lo["objective"] == 1 / 4
    assert hi["auroc"] == 1 - 1 / 16 and lo["auroc"] == 1 - 4 / 16  # pairs it ranks wrongly
    assert cal["score"]["name"] == "hi"


def test_the_combination_must_do_better_at_the_threshold_not_only_rank_better():
    """`beats`: a lower objective wins whatever the AUROC; a higher AUROC wins only on an
    equal objective (the combination is chosen only when it beats every single signal)."""
    def c(objective, auroc):
        return {"objective": objective, "auroc": auroc}

    assert beats(c(0.2, 0.6), c(0.3, 0.9))
    assert not beats(c(0.3, 0.9), c(0.2, 0.6))  # ranks better, costs more: not chosen
    assert beats(c(0.2, 0.9), c(0.2, 0.8)) and not beats(c(0.2, 0.8), c(0.2, 0.9))
    assert not beats(c(0.2, 0.8), c(0.2, 0.8))


def test_a_candidate_at_cost_c_and_under_keep95():
    """Two unanswerable questions (3.5, 3.6) score above the lowest answer (3.0): declining
    both loses that answer. At t = 2 every answer is kept and half the unanswerable declined;
    at t = 3.8 one answer in four is lost and every unanswerable declined."""
    pos, neg = [3.0, 4.0, 5.0, 6.0], [0.0, 1.0, 3.5, 3.6]
    at5 = candidate("s", pos, neg, "cost", 5.0, False)  # 5 · 0 + 1/2 against 5 · 1/4 + 0
    assert (at5["kept"], at5["declined"], at5["objective"]) == (1.0, 0.5, 0.5)
    assert at5["auroc"] == 1 - 2 / 16 and not at5["fitted"]
    at1 = candidate("s", pos, neg, "balanced", 5.0, False)  # c = 1: 1/2 against 1/4
    assert (at1["kept"], at1["declined"], at1["objective"]) == (0.75, 1.0, 0.25)
    keep = candidate("s", pos, neg, "keep95", 5.0, True)  # the highest t keeping every answer: 2
    assert (keep["kept"], keep["declined"], keep["objective"]) == (1.0, 0.5, 0.5) and keep["fitted"]
    # four unanswerable between the lowest answer and the next: at c = 2 losing it is worth
    # declining them (2 · 1/4 + 0 against 0 + 4/5), and the objective weighs the loss by c
    at2 = candidate("s", pos, [0.0, 3.1, 3.2, 3.3, 3.4], "cost", 2.0, False)
    assert (at2["kept"], at2["declined"], at2["objective"]) == (0.75, 1.0, 0.5)


@pytest.mark.parametrize("n,tail", [(4, ""), (5, "; and 1 more")])
def test_the_stale_message_names_four_settings_then_counts(n, tail):
    was = {f"s{i}": i for i in range(n)}
    why = Gate({**CAL, "settings": was}, {f"s{i}": i + 1 for i in range(n)}).decide({"s": 1.0})[1]
    named = "; ".join(f"s{i} was {i}, now {i + 1}" for i in range(4))
    assert why == (f"the calibration was made with other settings ({named}{tail}): the scores shifted, "
                   "run glassrag calibrate again")


def test_a_gate_that_cannot_separate_says_why():
    for cal, reason in [({**CAL, "separable": False, "why": "too few"}, "too few"),
                        ({**CAL, "separable": False}, "the interval [0.80, 0.95] reaches 0.5")]:
        assert Gate(cal, {"bm25.k1": 1.5}).decide({"s": 0.0}) == (False, (
            "declines nothing: on the train split its best score (s, AUROC 0.90) could not tell "
            f"answerable from unanswerable questions: {reason}"))


def test_the_gate_params_the_trace_shows():
    assert Gate(CAL, {"bm25.k1": 1.5}).params() == {
        "score": "s", "threshold": 0.25, "rule": "cost", "cost": 5.0, "separable": True,
        "auroc": {"auroc": 0.9, "low": 0.8, "high": 0.95}, "offtopic_threshold": None}
    assert Gate(CAL, {"bm25.k1": 2.0}).params()["threshold"] is None  # stale: no threshold applies
    assert Gate(None, {}).params() == {"score": None, "threshold": None, "rule": None, "cost": None,
                                       "separable": None, "auroc": None, "offtopic_threshold": None}
