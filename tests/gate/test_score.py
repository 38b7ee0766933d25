"""The gate's combined score by arithmetic (gate/score.py): standardise each signal with the
train mean and standard deviation, then w·z + c; out of fold, a question is scored by the
model fitted without its fold. (Tests added after the mutation run of docs/testing.md,
which showed these numbers were checked only for their sign.)"""

from __future__ import annotations

import numpy as np
import pytest

from glassrag.gate.score import CV_FOLDS, combined_oof, fit_combined, folds, score_name, value

SCORE = {"kind": "combined", "names": ["a", "b"], "mean": [1.0, 2.0], "std": [2.0, 4.0],
         "weights": [0.5, -1.0], "bias": 0.25}


def test_value_by_arithmetic():
    # z = ((3 - 1) / 2, (6 - 2) / 4) = (1, 1); 0.5 · 1 - 1 · 1 + 0.25
    assert value(SCORE, {"a": 3.0, "b": 6.0}) == pytest.approx(-0.25)
    assert value(SCORE, {"a": 1.0, "b": 10.0}) == pytest.approx(0.5 * 0 - 1.0 * 2 + 0.25)
    assert value({"kind": "signal", "name": "a"}, {"a": 7.0}) == 7.0
    assert score_name(SCORE) == "combined (a, b)" and score_name({"kind": "signal", "name": "a"}) == "a"


def test_fit_standardises_with_the_train_mean_and_std():
    pos = [{"a": 4.0, "b": 1.0}, {"a": 6.0, "b": 1.0}]
    neg = [{"a": 0.0, "b": 1.0}, {"a": 2.0, "b": 1.0}]
    fitted = fit_combined(pos, neg, ["a", "b"])
    assert fitted["mean"] == [3.0, 1.0]
    assert fitted["std"] == [pytest.approx(np.std([4, 6, 0, 2])), 1.0]  # a constant column: 1, not 0
    assert fitted["weights"][0] > 0 and fitted["weights"][1] == 0.0
    # the fitted model scores the train questions as its own formula says
    for s in pos + neg:
        z = (s["a"] - 3.0) / np.std([4, 6, 0, 2])
        assert value(fitted, s) == pytest.approx(fitted["weights"][0] * z + fitted["bias"])


def test_a_signal_s_unit_does_not_change_the_fitted_weights():
    """Standardising makes the fit blind to each signal's scale: the same questions with b
    in thousandths (b × 1000) give the same weights and bias, and a mean and std 1000 times
    larger (the L2 penalty would otherwise weigh b by its unit)."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(0, 1, 40), rng.normal(0, 1, 40)
    label = a + 2 * b + rng.normal(0, 0.5, 40) > 0
    rows = [{"a": float(x), "b": float(y)} for x, y in zip(a, b)]
    wide = [{"a": r["a"], "b": 1000 * r["b"]} for r in rows]
    split = lambda rs: ([r for r, y in zip(rs, label) if y], [r for r, y in zip(rs, label) if not y])  # noqa: E731
    plain, scaled = fit_combined(*split(rows), ["a", "b"]), fit_combined(*split(wide), ["a", "b"])
    assert scaled["weights"] == pytest.approx(plain["weights"]) and scaled["bias"] == pytest.approx(plain["bias"])
    assert scaled["std"][1] == pytest.approx(1000 * plain["std"][1])
    assert plain["weights"][1] > plain["weights"][0] > 0  # b, twice a's weight in the labels, weighs more


def test_out_of_fold_scores_come_from_models_that_did_not_see_them():
    rng = np.random.default_rng(3)
    pos = [{"a": float(v)} for v in rng.normal(2, 1, 20)]
    neg = [{"a": float(v)} for v in rng.normal(0, 1, 20)]
    got_pos, got_neg = combined_oof(pos, neg, ["a"])
    fold = np.r_[folds(20, CV_FOLDS, 0), folds(20, CV_FOLDS, 1)]
    rows = pos + neg
    expected = []
    for i, s in enumerate(rows):
        train = [r for j, r in enumerate(rows) if fold[j] != fold[i]]
        model = fit_combined([r for r in train if r in pos], [r for r in train if r in neg], ["a"])
        expected.append(value(model, s))
    assert got_pos + got_neg == pytest.approx(expected)
    assert sorted(np.bincount(folds(23, 5, 0))) == [4, 4, 5, 5, 5]
    assert list(folds(10, 5, 0)) == list(folds(10, 5, 0)) and list(folds(10, 5, 0)) != list(folds(10, 5, 1))
