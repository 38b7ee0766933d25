"""Exact cosine search: unit-length float32 vectors, one matrix product, argpartition.

    cos(q, d) = q·d / (|q| |d|)

An optional similarity cutoff drops hits below it (the trace records how many).
"""

from __future__ import annotations

import numpy as np

from glassrag.dense.base import normalize_rows


class ExactCosine:
    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = normalize_rows(vectors)

    def __len__(self) -> int:
        return self.vectors.shape[0]

    def similarities(self, query: np.ndarray) -> np.ndarray:
        """cos(q, d) for every vector d (all zeros for a zero query)."""
        q = normalize_rows(query.reshape(1, -1))[0]
        return self.vectors @ q

    def search(self, query: np.ndarray, k: int,
               cutoff: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """Top k (indices, cosines) best first, and how many the cutoff removed."""
        if not np.asarray(query).any() or len(self) == 0 or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), 0
        return self.top(self.similarities(query), k, cutoff)

    @staticmethod
    def top(sims: np.ndarray, k: int, cutoff: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """The top k of precomputed similarities, best first (ties: lower index), after the cutoff."""
        if sims.size == 0 or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), 0
        k = min(k, sims.size)
        top = np.argpartition(-sims, k - 1)[:k]
        order = np.lexsort((top, -sims[top]))
        idx, scores = top[order], sims[top[order]]
        removed = 0
        if cutoff is not None:
            keep = scores >= cutoff
            removed = int((~keep).sum())
            idx, scores = idx[keep], scores[keep]
        return idx, scores.astype(np.float32), removed
