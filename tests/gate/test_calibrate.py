"""calibrate() as a whole, by hand: the record the CLI, the index and the web pages read, what
the cost changes, when the combination is tried, when a score counts as separable and why
not, and the errors a user reads (issue 13: the survivors of the gate's mutation re-run that
were strings, keys and boundaries no test in tests/gate/ read)."""

from __future__ import annotations

import pytest

from glassrag.errors import ConfigError
from glassrag.gate.calibrate import auroc, auroc_interval, calibrate, choose, sweep

FOUND = [0.6, 0.7, 0.8, 0.9, 1.0]
UNANSWERABLE = [0.1, 0.2, 0.3, 0.62, 0.65]


def signals(**columns):
    n = len(next(iter(columns.values())))
    return [{k: float(v[i]) for k, v in columns.items()} for i in range(n)]


def rounded(data):
    """Floats to 9 places, inside dicts and lists (0.6 × 5 is not exactly 3)."""
    if isinstance(data, float):
        return round(data, 9)
    if isinstance(data, dict):
        return {k: rounded(v) for k, v in data.items()}
    if isinstance(data, list):
        return [rounded(v) for v in data]
    return data


def row(threshold, kept, declined, cost):
    return {"threshold": threshold, "answerable_kept": kept, "unanswerable_declined": declined,
            "balanced_accuracy": (kept + declined) / 2, "cost": cost * (1 - kept) + (1 - declined)}


def test_the_whole_record_of_one_signal_at_cost_5():
    got = calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "cost", 5.0, "g")
    # AUROC: 0.6 beats 3 of the 5 unanswerable scores, the other four beat all 5: 23 / 25
    low, high = auroc_interval(FOUND, UNANSWERABLE)
    # the cuts: below the lowest, between each pair of distinct values, above the highest
    cuts = [-0.9, 0.15, 0.25, 0.45, 0.61, 0.635, 0.675, 0.75, 0.85, 0.95, 2.0]
    kept = [1, 1, 1, 1, 0.8, 0.8, 0.8, 0.6, 0.4, 0.2, 0]
    declined = [0, 0.2, 0.4, 0.6, 0.6, 0.8, 1, 1, 1, 1, 1]
    rows = [row(t, k, d, 5.0) for t, k, d in zip(cuts, kept, declined)]
    # cost 5 × (1 − kept) + (1 − declined) is least at 0.45: 0 + 0.4
    chosen = row(0.45, 1, 0.6, 5.0)
    assert rounded(got) == rounded({
        "score": {"kind": "signal", "name": "s"}, "threshold": 0.45, "rule": "cost", "cost": 5.0,
        "score_mode": "auto", "how": "auto", "separable": True, "why": "", "auroc": {"auroc": 23 / 25, "low": low, "high": high},
        "signals": [{"signal": "s", "auroc": 23 / 25, "low": low, "high": high, "fitted": False,
                     "objective": 0.4, "kept": 1.0, "declined": 0.6}],
        "chosen": chosen, "sweep": rows, "n_answerable": 5, "n_unanswerable": 5, "warnings": []})
    assert list(got) == ["score", "threshold", "rule", "cost", "score_mode", "how", "separable", "why", "auroc", "signals", "chosen",
                         "sweep", "n_answerable", "n_unanswerable", "warnings"]
    assert low > 0.5


def test_the_cost_moves_the_threshold_and_every_row_s_cost():
    # at cost 1, declining every unanswerable question for one found answer pays: 0.2 + 0 at 0.675
    got = calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "cost", 1.0, "g")
    assert got["threshold"] == pytest.approx(0.675) and got["cost"] == 1.0
    assert rounded(got["chosen"]) == rounded(row(0.675, 0.8, 1, 1.0))
    assert [r["cost"] for r in got["sweep"]] == pytest.approx([r["cost"] for r in sweep(FOUND, UNANSWERABLE, 1.0)])
    assert got["signals"][0]["objective"] == pytest.approx(0.2)
    # balanced reads cost 1 whatever the cost given; keep95 keeps every found answer
    assert calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "balanced", 5.0, "g")["threshold"] == \
        pytest.approx(0.675)
    keep = calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "keep95", 5.0, "g")
    assert keep["threshold"] == pytest.approx(0.45) and keep["signals"][0]["objective"] == pytest.approx(0.4)


def test_a_score_whose_interval_is_exactly_half_is_not_separable():
    flat = calibrate(signals(s=[1.0] * 5), signals(s=[1.0] * 5), "cost", 5.0, "g")
    assert flat["auroc"] == {"auroc": 0.5, "low": 0.5, "high": 0.5}
    assert (flat["separable"], flat["threshold"]) == (False, None)
    assert flat["why"] == "no signal's AUROC interval lies above 0.5; the closest, s, has [0.50, 0.50]"
    assert flat["warnings"] == ["the gate cannot do better than chance on this train split, so it declines "
                                "nothing but questions that match no passage: " + flat["why"]]


def test_a_separating_signal_is_chosen_over_a_cheaper_one_that_cannot_separate():
    # issue 26: 'cheap' has the least cost (it declines one unanswerable question for free) but
    # its interval reaches 0.5; 'sep' separates (AUROC 1), at a higher cost. Calibration must
    # read 'sep' and keep the gate on, never switch it off while a signal separates
    found = [{"cheap": 0.5, "sep": float(i)} for i in range(1, 11)]
    unanswerable = [{"cheap": 0.0 if i < 7 else 1.0, "sep": 0.0 if i < 6 else 1.5} for i in range(10)]
    got = calibrate(found, unanswerable, "cost", 5.0, "g")
    table = {r["signal"]: r for r in got["signals"]}
    # cheap: cost 0.3 (keeps every found answer, declines 7 of 10), AUROC 0.7 with an interval
    # reaching below 0.5; sep: cost 0.4 (declines 6 of 10), AUROC (6·10 + 4·9)/100 = 0.96
    assert table["cheap"]["objective"] == pytest.approx(0.3) and table["cheap"]["low"] <= 0.5
    assert table["sep"]["objective"] == pytest.approx(0.4) and table["sep"]["auroc"] == pytest.approx(0.96)
    assert table["sep"]["low"] > 0.5
    assert got["score"] != {"kind": "signal", "name": "cheap"}
    assert got["separable"] and got["threshold"] is not None and got["warnings"] == []


def test_weights_make_each_kind_of_unanswerable_count_alike():
    # two unanswerable questions weighing 3 and 1: the share declined and the AUROC are weighted
    rows = sweep([2.0, 3.0], [1.0, 2.5], 1.0, weights=[3.0, 1.0])
    at = {r["threshold"]: r for r in rows}
    assert at[1.5]["unanswerable_declined"] == pytest.approx(3 / 4)
    assert at[2.75]["unanswerable_declined"] == pytest.approx(1.0)
    # AUROC: the first (weight 3) is below both positives, the second (weight 1) above one
    assert auroc([2.0, 3.0], [1.0, 2.5], [3.0, 1.0]) == pytest.approx((3 * 2 + 1 * 1) / (2 * 4))
    assert auroc([2.0, 3.0], [1.0, 2.5], [1.0, 1.0]) == pytest.approx(auroc([2.0, 3.0], [1.0, 2.5]))
    low, high = auroc_interval([2.0, 3.0, 4.0], [1.0, 2.5], weights=[1.0, 1.0])
    assert (low, high) == auroc_interval([2.0, 3.0, 4.0], [1.0, 2.5])


def test_too_few_questions_of_a_class_are_not_enough_to_tell():
    few = calibrate(signals(s=FOUND[:4]), signals(s=UNANSWERABLE[:2]), "cost", 5.0, "g")
    assert few["auroc"]["low"] == 1.0  # perfectly apart, but 4 and 2 questions
    assert (few["separable"], few["threshold"]) == (False, None)
    assert few["why"] == ("too few train questions to tell: 4 found answers and 2 unanswerable "
                          "(at least 5 of each are needed)")
    assert (few["n_answerable"], few["n_unanswerable"]) == (4, 2)


def test_the_combination_is_tried_with_two_signals_and_five_questions_of_each_class():
    def tried(found: int, unanswerable: int, names=("a", "b")) -> bool:
        pos = signals(**{n: FOUND[:found] for n in names})
        neg = signals(**{n: UNANSWERABLE[:unanswerable] for n in names})
        return any(r["signal"] == "combined" for r in calibrate(pos, neg, "cost", 5.0, "g")["signals"])

    assert tried(5, 5)  # CV_FOLDS = 5 of each class: enough for five folds
    assert not tried(4, 5) and not tried(5, 4)
    assert not tried(5, 5, names=("a",))  # one signal has nothing to combine


def test_errors_name_the_golden_set_and_say_what_to_add():
    with pytest.raises(ConfigError) as err:
        calibrate(signals(s=FOUND), [], "cost", 5.0, "golden.jsonl (train split)")
    assert err.value.problem == (
        "golden.jsonl (train split) has no unanswerable questions in this split, so the threshold cannot "
        "be calibrated: the sweep needs questions the documents do not answer to see what declining gains")
    assert err.value.hint == 'add questions with "answerable": false (and "kind": "unanswerable") to the train split'
    with pytest.raises(ConfigError) as err:
        calibrate([], signals(s=UNANSWERABLE), "cost", 5.0, "golden.jsonl (train split)")
    assert (err.value.problem, err.value.hint) == (
        "golden.jsonl (train split) has no answerable questions whose answer was found in this split",
        "the sweep needs found answers to see what declining costs")
    for call in (lambda: calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "strict", 5.0, "g"),
                 lambda: choose(sweep(FOUND, UNANSWERABLE), "strict")):
        with pytest.raises(ConfigError) as err:
            call()
        assert (err.value.problem, err.value.hint) == ("unknown calibration rule 'strict'",
                                                       "choose one of: cost, balanced, keep95")


def test_the_signal_table_lists_equal_objectives_by_the_higher_auroc_first():
    # both signals decline 3 of 5 unanswerable questions at no found answer's cost (objective
    # 0.4 at cost 5); b's two high unanswerable scores give it AUROC 17 / 25 against a's 23 / 25
    b_unanswerable = [0.1, 0.2, 0.3, 0.95, 0.99]
    got = calibrate(signals(a=FOUND, b=FOUND), signals(a=UNANSWERABLE, b=b_unanswerable), "cost", 5.0, "g")
    table = {r["signal"]: i for i, r in enumerate(got["signals"])}
    rows = {r["signal"]: r for r in got["signals"]}
    assert rows["a"]["objective"] == pytest.approx(rows["b"]["objective"]) == pytest.approx(0.4)
    assert (rows["a"]["auroc"], rows["b"]["auroc"]) == (23 / 25, 17 / 25)
    assert table["a"] < table["b"]


def test_combined_reads_the_fixed_combination_and_no_other_signal():
    import numpy as np
    from glassrag.gate.calibrate import COMBINED
    from glassrag.gate.score import combined_oof, fit_combined

    rng = np.random.default_rng(0)
    pos, neg = 30, 30
    cols = {n: np.r_[rng.normal(1.0, 1.0, pos), rng.normal(0.0, 1.0, neg)] for n in COMBINED}
    cols["top:bm25"] = np.r_[np.full(pos, 9.0), np.zeros(neg)]  # separates perfectly, and is not read
    found = [{n: float(v[i]) for n, v in cols.items()} for i in range(pos)]
    unanswerable = [{n: float(v[pos + i]) for n, v in cols.items()} for i in range(neg)]
    got = calibrate(found, unanswerable, "cost", 5.0, "g", score="combined")
    assert (got["score_mode"], got["how"], got["separable"]) == ("combined", "combined", True)
    assert got["score"] == fit_combined(found, unanswerable, list(COMBINED))
    # the threshold is the rule's on the out-of-fold scores of that combination
    oof = combined_oof(found, unanswerable, list(COMBINED))
    assert got["threshold"] == choose(sweep(*oof, 5.0), "cost", 5.0)["threshold"]
    assert [r["names"] for r in got["signals"] if r["signal"] == "combined"] == [list(COMBINED)]
    # auto, on the same questions, reads the single signal that separates best
    assert calibrate(found, unanswerable, "cost", 5.0, "g")["score"] == {"kind": "signal", "name": "top:bm25"}


def test_combined_reads_the_signals_it_is_given_and_says_which_no_question_has():
    """gate.signals: the combination reads the names given (present ones), not COMBINED, and a
    name no train question has is left out with a warning."""
    import numpy as np
    from glassrag.gate.score import fit_combined

    rng = np.random.default_rng(1)
    pos = neg = 30
    cols = {n: np.r_[rng.normal(1.0, 1.0, pos), rng.normal(0.0, 1.0, neg)] for n in ("answerability", "margin", "x")}
    found = [{n: float(v[i]) for n, v in cols.items()} for i in range(pos)]
    unanswerable = [{n: float(v[pos + i]) for n, v in cols.items()} for i in range(neg)]
    got = calibrate(found, unanswerable, "cost", 5.0, "g", score="combined",
                    combined=("answerability", "margin", "bm25_top"))
    assert got["how"] == "combined" and got["score"] == fit_combined(found, unanswerable, ["answerability", "margin"])
    assert [w for w in got["warnings"] if "bm25_top" in w] == [
        "the combination reads answerability, margin without bm25_top, which not every train question has "
        "(gate.signals; gate/signals.py names the signals)"]
    plain = calibrate(found, unanswerable, "cost", 5.0, "g", score="combined", combined=("answerability", "margin"))
    assert not [w for w in plain["warnings"] if "without" in w]


def test_combined_falls_back_to_a_separating_signal_and_says_why():
    from glassrag.gate.calibrate import COMBINED

    n = 20
    noise = [float(i % 7) for i in range(2 * n)]  # the combination's signals carry nothing
    found = [{**{c: noise[i] for c in COMBINED}, "x": 10.0 + i} for i in range(n)]
    unanswerable = [{**{c: noise[n + i] for c in COMBINED}, "x": float(i)} for i in range(n)]
    got = calibrate(found, unanswerable, "cost", 5.0, "g", score="combined")
    assert got["how"].startswith(f"auto: the combination of {', '.join(COMBINED)} does not separate")
    assert got["score"] == {"kind": "signal", "name": "x"} and got["separable"]  # never off while x separates
    few = calibrate(signals(answerability=FOUND, coverage=FOUND), signals(answerability=UNANSWERABLE[:4],
                                                                           coverage=UNANSWERABLE[:4]),
                    "cost", 5.0, "g", score="combined")
    assert few["how"] == ("auto: the combination of answerability, bm25_norm, term_share, coverage, known_share "
                          "needs at least 5 questions of each class and two of its signals (5 found answers, "
                          "4 unanswerable; signals present: answerability, coverage)")


def test_an_unknown_gate_score_lists_the_valid_ones():
    with pytest.raises(ConfigError) as e:
        calibrate(signals(s=FOUND), signals(s=UNANSWERABLE), "cost", 5.0, "g", score="best")
    assert "unknown gate score 'best'" in e.value.problem and e.value.hint == "choose one of: combined, auto"
