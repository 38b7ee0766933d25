"""Approximate cosine search with HNSW (Malkov & Yashunin 2018) via faiss, behind the same
interface as ExactCosine, for corpora where a full matrix product per query is too slow.

Vectors are unit length, so inner product is cosine. `m` is the graph degree,
`ef_construction` and `ef_search` the candidate lists at build and query time (faiss's
defaults 32 / 40 / 16 raised for recall: bench/ann_recall.py measures recall@k against
exact search).
"""

from __future__ import annotations

import numpy as np

from glassrag.dense.base import normalize_rows
from glassrag.errors import ConfigError


class HNSWCosine:
    def __init__(self, vectors: np.ndarray, m: int = 32, ef_construction: int = 200,
                 ef_search: int = 128) -> None:
        try:
            import faiss
        except ImportError:
            raise ConfigError("hnsw search needs faiss", "pip install faiss-cpu, or use [neural] search = \"exact\"") from None
        self.vectors = normalize_rows(vectors)
        self.index = faiss.IndexHNSWFlat(self.vectors.shape[1], m, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = ef_construction
        self.index.hnsw.efSearch = ef_search
        if len(self.vectors):
            self.index.add(self.vectors)

    def __len__(self) -> int:
        return self.vectors.shape[0]

    def search(self, query: np.ndarray, k: int,
               cutoff: float | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        q = normalize_rows(query.reshape(1, -1))
        if not q.any() or len(self) == 0 or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), 0
        k = min(k, len(self))
        self.index.hnsw.efSearch = max(self.index.hnsw.efSearch, k)
        scores, idx = self.index.search(q, k)
        keep = idx[0] >= 0
        idx, scores = idx[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)
        removed = 0
        if cutoff is not None:
            ok = scores >= cutoff
            removed = int((~ok).sum())
            idx, scores = idx[ok], scores[ok]
        return idx, scores, removed
