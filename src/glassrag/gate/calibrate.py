"""Calibrating the gate's threshold on the train split.

For each candidate threshold t (midpoints between the observed top scores, and one
below all of them):

    kept(t)     = share of answerable questions whose top score ≥ t
    declined(t) = share of unanswerable questions whose top score < t

Rules: `balanced` maximises balanced accuracy (kept + declined) / 2 (ties: the lower
t, which keeps more answers); `keep95` takes the highest t that keeps at least 95 % of
answerable questions. The whole sweep is saved for the UI to plot.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glassrag.errors import ConfigError

RULES = ("balanced", "keep95")


def sweep(answerable: Sequence[float], unanswerable: Sequence[float]) -> list[dict[str, float]]:
    """kept/declined at every threshold that changes either (a question with no hit has
    top score -inf: it is declined at every threshold)."""
    a = np.asarray(answerable, dtype=np.float64)
    u = np.asarray(unanswerable, dtype=np.float64)
    finite = np.unique(np.concatenate([a, u])[np.isfinite(np.concatenate([a, u]))])
    cuts = [float(finite[0]) - 1.0] if finite.size else [0.0]
    cuts += [float(x) for x in (finite[:-1] + finite[1:]) / 2.0]
    if finite.size:
        cuts.append(float(finite[-1]) + 1.0)
    rows = []
    for t in cuts:
        kept = float((a >= t).mean()) if a.size else 0.0
        declined = float((u < t).mean()) if u.size else 0.0
        rows.append({"threshold": t, "answerable_kept": kept, "unanswerable_declined": declined,
                     "balanced_accuracy": (kept + declined) / 2.0})
    return rows


def choose(rows: list[dict[str, float]], rule: str = "balanced") -> dict[str, float]:
    if rule == "balanced":
        return max(rows, key=lambda r: (r["balanced_accuracy"], -r["threshold"]))
    if rule == "keep95":
        ok = [r for r in rows if r["answerable_kept"] >= 0.95]
        return max(ok, key=lambda r: r["threshold"])
    raise ConfigError(f"unknown calibration rule {rule!r}", f"choose one of: {', '.join(RULES)}")


def calibrate(answerable: Sequence[float], unanswerable: Sequence[float], rule: str,
              source: str) -> dict[str, Any]:
    """The threshold and its sweep; refuses without unanswerable questions."""
    if not len(unanswerable):
        raise ConfigError(
            f"{source} has no unanswerable questions in this split, so the threshold cannot be "
            "calibrated: the sweep needs questions the documents do not answer to see what "
            "declining gains",
            'add questions with "answerable": false (and "kind": "unanswerable") to the train split')
    if not len(answerable):
        raise ConfigError(f"{source} has no answerable questions in this split",
                          "the sweep needs answerable questions to see what declining costs")
    rows = sweep(answerable, unanswerable)
    best = choose(rows, rule)
    return {"threshold": best["threshold"], "rule": rule, "chosen": best, "sweep": rows,
            "n_answerable": len(answerable), "n_unanswerable": len(unanswerable)}
