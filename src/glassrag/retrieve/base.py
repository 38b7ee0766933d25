"""What the retrievers share: their contract and turning (rows, scores) into hits."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from glassrag.dense.exact import ExactCosine
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.store.base import Index


class Retriever(Protocol):
    """A stage whose input is the analysed question; `searched`: the chunks it scored."""

    name: str
    kind: str
    searched: int

    def params(self) -> dict[str, Any]: ...

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]: ...


def hits_of(index: Index, stage: str, idx: np.ndarray, scores: np.ndarray) -> list[Hit]:
    """Hits ranked 1, 2, … from chunk rows and their scores, best first."""
    stored = getattr(index.chunks, "ids", None)  # a stored table's ids: read all at once
    if stored is not None:
        ids = [b.decode("utf-8") for b in stored[idx].tolist()]
    else:
        ids = [index.chunk_id(i) for i in idx.tolist()]
    return [Hit(cid, float(s), r, stage) for r, (cid, s) in enumerate(zip(ids, scores.tolist()), 1)]


def exact_top(query: Query, name: str, search: ExactCosine, vector: np.ndarray, depth: int,
              cutoff: float | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The top `depth` of every chunk's cosine, kept in the query's cache (as `sims:NAME`)
    for fusion to read; a zero question vector (no known word) compares with nothing."""
    sims = query.cached(f"sims:{name}", lambda: search.similarities(vector))
    return search.top(sims if vector.any() else sims[:0], depth, cutoff)
