"""What the retrievers share: their contract, the table entry that registers one, the scores
a later stage may read from one, and turning (rows, scores) into hits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from glassrag.dense.exact import ExactCosine
from glassrag.fuse.base import ScoreSource
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.store.base import Index


class Retriever(Protocol):
    """A stage whose input is the analysed question; `searched`: the chunks it scored.

    This is the whole contract: a retriever that meets it fuses under every fusion method.
    Weighted fusion reads each retriever's score of chunks outside its list from
    `fusion_scores`: the retriever's own `score_source` when it declares one
    (`ScoresAnyChunk`), else its list's scores (`listed_scores`)."""

    name: str
    kind: str
    searched: int

    def params(self) -> dict[str, Any]: ...

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]: ...


@runtime_checkable
class ScoresAnyChunk(Protocol):
    """A retriever that can score a chunk it did not list (BM25, LSA, neural: they score every
    chunk), declared by this method; called after its `apply` for the same question."""

    def score_source(self, query: Query) -> ScoreSource: ...


def listed_scores(hits: Sequence[Hit]) -> ScoreSource:
    """A retriever's scores as far as its list tells them: s(d) is d's score in the list, and a
    chunk not in it gets the list's lowest score (a bound: the retriever ranked it no higher);
    the range is the fused candidates' (`whole_corpus=False`), so weighted fusion normalises

        (s(d) - min_candidates) / (max_candidates - min_candidates)."""
    scores = {h.chunk_id: float(h.score) for h in hits}
    floor = min(scores.values(), default=0.0)
    return ScoreSource(lambda ids: [scores.get(c, floor) for c in ids], whole_corpus=False)


def fusion_scores(retriever: Retriever, query: Query, hits: Sequence[Hit]) -> ScoreSource:
    """The scores weighted fusion reads from `retriever` for `query` (its list: `hits`)."""
    if isinstance(retriever, ScoresAnyChunk):
        return retriever.score_source(query)
    return listed_scores(hits)


def corpus_scores(index: Index, full: np.ndarray) -> ScoreSource:
    """Scores of every chunk (by row): any chunk's score, and the corpus-wide range."""
    position = index.position
    low, high = (float(full.min()), float(full.max())) if full.size else (0.0, 0.0)
    return ScoreSource(lambda ids: full[[position[c] for c in ids]], low, high)


def _own_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "", (f"{name}'s own score: higher is a closer match within this question's list; its scale "
                "is the retriever's.")


def _everywhere(index: Index) -> bool:
    return True


@dataclass(frozen=True)
class Entry:
    """One row of the retriever table (glassrag/retrieve/__init__.py RETRIEVERS):

    make            (index, config, bm25) -> the retriever
    describe_score  (stage name, its params) -> (glossary term, what its score is), for the UI
    available       index -> whether it can run on this index (the web offers only those)
    """

    make: Callable[..., Retriever]
    describe_score: Callable[[str, Mapping[str, Any]], tuple[str, str]] = _own_score
    available: Callable[[Index], bool] = _everywhere


def hits_of(index: Index, stage: str, idx: np.ndarray, scores: np.ndarray) -> list[Hit]:
    """Hits ranked 1, 2, … from chunk rows and their scores, best first."""
    stored = getattr(index.chunks, "ids", None)  # a stored table's ids: read all at once
    if stored is not None:
        ids = [b.decode("utf-8") for b in stored[idx].tolist()]
    else:
        ids = [index.chunk_id(i) for i in idx.tolist()]
    return [Hit(cid, float(s), r, stage) for r, (cid, s) in enumerate(zip(ids, scores.tolist()), 1)]


def cosines(query: Query, name: str, search: ExactCosine, vector: np.ndarray) -> np.ndarray:
    """Every chunk's cosine with `vector`, once per question (kept in the query's cache)."""
    return query.cached(f"sims:{name}", lambda: search.similarities(vector))


def exact_top(query: Query, name: str, search: ExactCosine, vector: np.ndarray, depth: int,
              cutoff: float | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The top `depth` of every chunk's cosine; a zero question vector (no known word)
    compares with nothing."""
    sims = cosines(query, name, search, vector)
    return search.top(sims if vector.any() else sims[:0], depth, cutoff)
