"""Score normalisation before weighted fusion."""

from __future__ import annotations

import numpy as np


def min_max(scores: np.ndarray) -> np.ndarray:
    """(s - min) / (max - min) over one ranked list; all ones when every score is equal."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return scores
    lo, hi = scores.min(), scores.max()
    if hi - lo <= 0:
        return np.ones_like(scores)
    return np.asarray((scores - lo) / (hi - lo), dtype=np.float64)
