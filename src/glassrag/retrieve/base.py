"""What the retrievers share: their contract (glassrag/stage.py, with empty inputs), the scores
a later stage may read from one, and turning (rows, scores) into hits."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from glassrag.dense.exact import ExactCosine
from glassrag.ingest.report import IngestReport, Progress
from glassrag.query import Query
from glassrag.schema import Chunk, Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ScoreSource, StageOutput, listed_scores
from glassrag.store.base import Index

__all__ = ["Building", "Entry", "Ranks", "Retriever", "ScoresAnyChunk", "corpus_scores", "cosines", "exact_top",
           "hits_of", "listed_scores"]


class Retriever(Protocol):
    """A stage whose input is the analysed question (its `inputs` are empty); `searched`: the
    chunks it scored.

    This is the whole contract: a retriever that meets it fuses under every fusion method.
    What weighted fusion reads of a chunk outside its list is its output's `scores` when it
    declares them, else its list's scores (glassrag/fuse/base.py `listed_scores`)."""

    name: str
    kind: Kind
    searched: int

    def params(self) -> dict[str, Any]: ...

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput: ...


@runtime_checkable
class ScoresAnyChunk(Protocol):
    """A retriever that can score a chunk it did not list (BM25, LSA, neural: they score every
    chunk), declared by this method; called after its `apply` for the same question."""

    def score_source(self, query: Query) -> ScoreSource: ...


class Building:
    """What a retriever's build hook (its entry's `build`) may read beside the index it adds
    its part to: the text each chunk is indexed by (`texts`, made once for every hook), where
    embeddings are cached, the ingest's report (counts and warnings) and its progress."""

    def __init__(self, chunks: Sequence[Chunk], text_of: Callable[[Chunk], str], report: IngestReport,
                 cache_dir: Path | None = None, progress: Progress | None = None) -> None:
        self.chunks, self.text_of, self.report = chunks, text_of, report
        self.cache_dir, self.progress = cache_dir, progress
        self._texts: list[str] | None = None

    def texts(self) -> list[str]:
        """Every chunk's indexed text (its context header first when chunk.context_header), in
        index order."""
        if self._texts is None:
            self._texts = [self.text_of(c) for c in self.chunks]
        return self._texts

    def step(self, what: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(what, done, total)


class Ranks:
    """The `run` of a retriever that ranks with `apply(query, []) -> (hits, notes)`: its output
    declares `score_source(query)` as its scores when it has one (`ScoresAnyChunk`)."""

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        raise NotImplementedError

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        hits, notes = self.apply(query, [])
        scores = self.score_source(query) if isinstance(self, ScoresAnyChunk) else None
        return StageOutput(tuple(hits), tuple(notes), scores)


def corpus_scores(index: Index, full: np.ndarray) -> ScoreSource:
    """Scores of every chunk (by row): any chunk's score, and the corpus-wide range."""
    position = index.position
    low, high = (float(full.min()), float(full.max())) if full.size else (0.0, 0.0)
    return ScoreSource(lambda ids: full[[position[c] for c in ids]], low, high)


def hits_of(index: Index, stage: str, idx: np.ndarray, scores: np.ndarray) -> list[Hit]:
    """Hits ranked 1, 2, … from chunk rows and their scores, best first."""
    stored = index.chunks.ids  # a stored table's ids: read all at once
    if stored is not None:
        ids = [b.decode("utf-8") for b in stored[idx].tolist()]
    else:
        ids = [index.chunk_id(i) for i in idx.tolist()]
    return [Hit(cid, float(s), r, stage) for r, (cid, s) in enumerate(zip(ids, scores.tolist()), 1)]


def cosines(query: Query, name: str, search: ExactCosine, vector: np.ndarray) -> np.ndarray:
    """Every chunk's cosine with `vector`, once per question (kept in the query's cache)."""
    sims: np.ndarray = query.cached(f"sims:{name}", lambda: search.similarities(vector))
    return sims


def exact_top(query: Query, name: str, search: ExactCosine, vector: np.ndarray, depth: int,
              cutoff: float | None) -> tuple[np.ndarray, np.ndarray, int]:
    """The top `depth` of every chunk's cosine; a zero question vector (no known word)
    compares with nothing."""
    sims = cosines(query, name, search, vector)
    return search.top(sims if vector.any() else sims[:0], depth, cutoff)
