"""Maximal marginal relevance (Carbonell & Goldstein 1998) over the top `pool` hits:

    next = argmax_{d ∉ S}  λ · rel(q, d) − (1 − λ) · max_{s ∈ S} sim(d, s)

rel is the input score min-max normalised over the pool; sim is the cosine of the
chunks' TF-IDF vectors ((1 + ln tf) · ln(N / n), unit length), so a near-duplicate
(an outdated copy of a policy) is pushed down once its twin is picked. Hits beyond the
pool keep their order after it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from glassrag.fuse.normalize import min_max
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ListStage, keeps_scores

if TYPE_CHECKING:  # scipy is imported when MMR is on, not by every pipeline that could have it
    import scipy.sparse as sp


def tfidf_rows(tf: sp.spmatrix) -> sp.csr_matrix:
    """(1 + ln tf) · ln(N / n) per chunk row, each row scaled to unit length."""
    import scipy.sparse as sp

    x = sp.csr_matrix(tf, dtype=np.float64, copy=True)
    n_docs = x.shape[0]
    doc_freq = np.bincount(x.indices, minlength=x.shape[1]).astype(np.float64)
    x.data = 1.0 + np.log(x.data)
    x = x @ sp.diags(np.log(n_docs / np.maximum(doc_freq, 1.0)))
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ x)


def made(index: Any, config: Any, bm25: Any) -> MMR | None:
    """MMR with `mmr.relevance` as λ; none when it is left out."""
    if config.mmr.relevance is None:
        return None
    return MMR(tfidf_rows(index.counts.tf), index.position, config.mmr.relevance, config.mmr.pool)


class MMR(ListStage):
    name = "mmr"
    kind = Kind.MMR

    def __init__(self, vectors: sp.csr_matrix, position: dict[str, int], relevance: float = 0.7,
                 pool: int = 20) -> None:
        self.vectors = vectors
        self.position = position
        self.relevance = relevance
        self.pool = pool

    def params(self) -> dict[str, Any]:
        return {"lambda": self.relevance, "pool": self.pool}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        head, tail = hits[: self.pool], hits[self.pool:]
        if len(head) < 2:
            return hits, []
        rel = min_max(np.array([h.score for h in head]))
        rows = self.vectors[[self.position[h.chunk_id] for h in head]]
        sim = (rows @ rows.T).toarray()
        lam = self.relevance
        picked: list[int] = []
        max_sim = np.zeros(len(head))
        left = np.ones(len(head), dtype=bool)
        values = np.zeros(len(head))
        while left.any():
            gain = np.where(left, lam * rel - (1 - lam) * max_sim, -np.inf)
            best = int(np.argmax(gain))
            values[best] = gain[best]
            picked.append(best)
            left[best] = False
            max_sim = np.maximum(max_sim, sim[best])
        order = [head[i] for i in picked] + tail
        moved = sum(1 for r, i in enumerate(picked) if i != r)
        out = [Hit(h.chunk_id, h.score, r, self.name,
                   {**h.detail, "mmr": float(values[picked[r - 1]])} if r <= len(picked) else h.detail)
               for r, h in enumerate(order, 1)]
        return out, ([f"reordered {moved} of the top {len(head)}"] if moved else [])


MMRS = {"mmr": Entry(made, keeps_scores("the top `pool` reordered for diversity (the MMR value is in each hit's "
                                        "detail)"), term="MMR")}
