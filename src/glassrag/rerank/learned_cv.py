"""Does the learned reranker help? Cross-validated on the train split, by question.

The train questions are dealt into F folds in order (question i into fold i mod F, F = 5).
For each fold the reranker is fitted (`learned.train`, the same L2) on the rows of the other
folds' questions and reorders each held-out question's pool; the pool's input order is the
no-rerank ranking. Per question with a relevant candidate in its pool:

    RR@10(order) = 1 / rank of the first relevant candidate,  0 when it ranks below 10
    Δ_q = RR@10(reranked, out of fold) − RR@10(input order)

and the reranker **helps** when the percentile-bootstrap 95% interval of mean Δ lies above 0
(stats.paired_bootstrap_ci, 10,000 resamples, seed 0), as the gate uses a signal only when
its AUROC interval lies above 0.5. `rerank.method = auto` reads this decision.
Questions without a relevant candidate in the pool cannot move and are left out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glassrag.rerank.learned import train
from glassrag.stats import paired_bootstrap_ci

FOLDS = 5
DEPTH = 10  # RR@10: the ranking metric the sweep chooses by (ranking mrr@10)


def reciprocal_rank(labels: np.ndarray, order: np.ndarray, depth: int = DEPTH) -> float:
    """1 / (1 + position of the first relevant row of `order`), 0 beyond `depth`."""
    hits = np.flatnonzero(labels[order][:depth] > 0)
    return 1.0 / (1 + hits[0]) if hits.size else 0.0


def probabilities(model: dict[str, Any], rows: np.ndarray) -> np.ndarray:
    """σ(w · (x − μ) / s + c), as LearnedReranker.score computes it."""
    z = (rows - np.asarray(model["mean"])) / np.asarray(model["std"])
    return np.asarray(1.0 / (1.0 + np.exp(-(z @ np.asarray(model["weights"]) + float(model["bias"])))), dtype=np.float64)


def cross_validate(x: np.ndarray, y: np.ndarray, groups: np.ndarray, l2: float = 1.0,
                   folds: int = FOLDS) -> dict[str, Any]:
    """The out-of-fold comparison of the reranked pools with their input order; `groups`
    gives each row's question (rows of a question are contiguous, in input order)."""
    questions = list(dict.fromkeys(groups.tolist()))
    fold_of = {g: i % folds for i, g in enumerate(questions)}
    row_fold = np.array([fold_of[g] for g in groups.tolist()])
    before: list[float] = []
    after: list[float] = []
    for f in range(min(folds, len(questions))):
        fit = row_fold != f
        if not fit.any() or y[fit].min() == y[fit].max():
            continue  # nothing to learn from without both labels: these questions are left out
        model = train(x[fit], y[fit], l2)
        for g in (q for q in questions if fold_of[q] == f):
            rows = groups == g
            labels = y[rows]
            if not labels.any():
                continue
            order = np.argsort(-probabilities(model, x[rows]), kind="stable")
            before.append(reciprocal_rank(labels, np.arange(len(labels))))
            after.append(reciprocal_rank(labels, order))
    return decide(before, after, folds)


def decide(before: list[float], after: list[float], folds: int = FOLDS) -> dict[str, Any]:
    """The figures and the decision from the per-question RR@10 without and with the reranker."""
    n = len(before)
    result: dict[str, Any] = {"folds": folds, "metric": f"mrr@{DEPTH}", "questions": n,
                              "improved": int(sum(a > b for a, b in zip(after, before))),
                              "degraded": int(sum(a < b for a, b in zip(after, before)))}
    if n < folds:
        return {**result, "none": None, "learned": None, "diff": None, "low": None, "high": None,
                "helps": False, "why": f"only {n} train question(s) have a relevant candidate in the pool; "
                                       f"cross-validation needs at least {folds}"}
    low, high = paired_bootstrap_ci(after, before)
    mean_before, mean_after = float(np.mean(before)), float(np.mean(after))
    helps = low > 0
    figures = (f"MRR@{DEPTH} {mean_after:.3f} reranked out of fold against {mean_before:.3f} without, "
               f"difference {mean_after - mean_before:+.3f} [{low:+.3f}, {high:+.3f}] over {n} train questions")
    return {**result, "none": mean_before, "learned": mean_after, "diff": mean_after - mean_before,
            "low": low, "high": high, "helps": helps,
            "why": figures + ("; the interval lies above 0" if helps else "; the interval reaches 0")}


def summary(cv: dict[str, Any] | None) -> str:
    """Why, in a few words for a trace: the cross-validated difference and its interval."""
    if not cv:
        return "trained before its cross-validation was recorded (run glassrag rerank-train again)"
    if cv.get("diff") is None:
        return str(cv["why"])
    return (f"by {cv['folds']}-fold cross-validation on train, {cv['metric'].upper()} {cv['diff']:+.3f} "
            f"[{cv['low']:+.3f}, {cv['high']:+.3f}] over {cv['questions']} questions, "
            + ("above 0" if cv["helps"] else "an interval that reaches 0"))
