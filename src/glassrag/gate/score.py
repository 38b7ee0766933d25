"""The gate's score: one signal (see `signals.py`), or a logistic-regression combination
of all of them trained on the train split to tell answerable from unanswerable questions:

    score = w · z + c,   z = (x − μ) / s

(the log-odds of "answerable"; μ, s the train rows' mean and standard deviation, L2 = 1,
fitted by `rerank.learned.fit_logistic`). Its AUROC is measured out of fold: each of
`CV_FOLDS` stratified folds is scored by a model fitted on the others.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glassrag.rerank.learned import fit_logistic

CV_FOLDS = 5


def _rows(signals: Sequence[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[float(s[n]) for n in names] for s in signals], dtype=np.float64).reshape(-1, len(names))


def _fit(x: np.ndarray, y: np.ndarray, v: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std[std == 0] = 1.0
    w, c = fit_logistic((x - mean) / std, y, sample_weight=v)
    return mean, std, w, c


def _sample_weights(n_answerable: int, weights: Sequence[float] | None) -> np.ndarray | None:
    """Each answerable question weighs 1, each unanswerable its calibration weight."""
    return None if weights is None else np.r_[np.ones(n_answerable), np.asarray(weights, dtype=np.float64)]


def folds(n: int, k: int, seed: int) -> np.ndarray:
    """A fold number for each of n rows: shuffled, as even as possible."""
    f = np.arange(n) % k
    np.random.default_rng(seed).shuffle(f)
    return f


def combined_oof(answerable: Sequence[dict[str, float]], unanswerable: Sequence[dict[str, float]],
                 names: Sequence[str], seed: int = 0,
                 weights: Sequence[float] | None = None) -> tuple[list[float], list[float]]:
    """Out-of-fold combined scores of the answerable and the unanswerable questions
    (folds stratified: each class is split into CV_FOLDS parts on its own; `weights`: the
    unanswerable questions' weights in the fit, as in the calibration's shares)."""
    x = np.vstack([_rows(answerable, names), _rows(unanswerable, names)])
    y = np.r_[np.ones(len(answerable)), np.zeros(len(unanswerable))]
    v = _sample_weights(len(answerable), weights)
    fold = np.r_[folds(len(answerable), CV_FOLDS, seed), folds(len(unanswerable), CV_FOLDS, seed + 1)]
    out = np.zeros(len(y))
    for f in range(CV_FOLDS):
        train = fold != f
        mean, std, w, c = _fit(x[train], y[train], None if v is None else v[train])
        out[~train] = (x[~train] - mean) / std @ w + c
    return out[: len(answerable)].tolist(), out[len(answerable):].tolist()


def fit_combined(answerable: Sequence[dict[str, float]], unanswerable: Sequence[dict[str, float]],
                 names: Sequence[str], weights: Sequence[float] | None = None) -> dict[str, Any]:
    x = np.vstack([_rows(answerable, names), _rows(unanswerable, names)])
    y = np.r_[np.ones(len(answerable)), np.zeros(len(unanswerable))]
    mean, std, w, c = _fit(x, y, _sample_weights(len(answerable), weights))
    return {"kind": "combined", "names": list(names), "mean": mean.tolist(), "std": std.tolist(),
            "weights": w.tolist(), "bias": c}


def score_name(score: dict[str, Any]) -> str:
    return score["name"] if score["kind"] == "signal" else "combined (" + ", ".join(score["names"]) + ")"


def value(score: dict[str, Any], signals: dict[str, float]) -> float | None:
    """The gate's score for one question's signals; None when a signal it needs is missing."""
    if score["kind"] == "signal":
        return signals.get(score["name"])
    if any(n not in signals for n in score["names"]):
        return None
    x = np.array([signals[n] for n in score["names"]])
    z = (x - np.asarray(score["mean"])) / np.asarray(score["std"])
    return float(z @ np.asarray(score["weights"]) + score["bias"])
