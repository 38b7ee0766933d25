"""BM25 as a retriever stage: the top `depth` chunks by BM25 score (glassrag/lexical/bm25.py
holds the formula)."""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.config import Config
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.query import Query
from glassrag.retrieve.base import Ranks, corpus_scores, hits_of
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, ScoreSource
from glassrag.store.base import Index


BM25_SCORE = ("BM25 match strength: the sum of each question word's weight in this passage. Unbounded, "
              "on this index's scale: compare it within one question, not across questions.")


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "BM25", f"{BM25_SCORE} {NOT_A_PROBABILITY}"


class BM25Retriever(Ranks):
    name = "bm25"
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25) -> None:
        self.index, self.bm25 = index, bm25
        self.depth = config.retrieve.depth
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {**self.bm25.params(), "depth": self.depth, "family": "lexical"}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        idx, scores = top_k(query.bm25_scores(self.bm25), self.depth)
        missing = sorted({t for t in query.tokens if t not in self.index.counts.vocab})
        notes = [f"not in the index: {', '.join(missing)}"] if missing else []
        return hits_of(self.index, self.name, idx, scores), notes

    def score_source(self, query: Query) -> ScoreSource:
        """Every chunk's BM25 score for the question (computed once per question)."""
        return corpus_scores(self.index, query.bm25_scores(self.bm25))
