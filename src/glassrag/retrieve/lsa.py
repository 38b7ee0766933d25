"""LSA as a retriever stage: the top `depth` chunks by cosine with the question folded into
the LSA space (glassrag/dense/lsa.py), after the optional similarity cutoff. Its part of the
index, the fitted model, is built by `build` (its table entry's hook) from the term counts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from glassrag.config import Config
from glassrag.dense.exact import ExactCosine
from glassrag.dense.lsa import LSA
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve.base import Building, Ranks, corpus_scores, cosines, exact_top, hits_of
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, ScoreSource
from glassrag.store.base import Index


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "LSA", "Cosine similarity of LSA vectors (−1 to 1): closeness of topic to the question. " + NOT_A_PROBABILITY


def has_lsa(index: Index) -> bool:
    return index.lsa is not None


def build(name: str, index: Index, building: Building) -> Index:
    """The index with its LSA model, fitted on its term counts with the [lsa] settings (an
    index without chunks has none: there is nothing to fit)."""
    if not len(index.chunks):
        return index
    building.step("lsa", 0, 1)
    s = index.config.lsa
    return replace(index, lsa=LSA(s.dim, s.power_iterations, s.seed, s.fit_sample).fit(index.counts))


class LSARetriever(Ranks):
    name = "lsa"
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        if index.lsa is None:
            raise ConfigError("the configuration asks for lsa but this index has no LSA model",
                              "re-ingest with lsa among [retrieve] retrievers or observe, or drop it")
        self.index, self.lsa = index, index.lsa
        self.depth, self.cutoff = config.retrieve.depth, config.lsa.cutoff
        self.searched = len(index.chunks)
        self._search: ExactCosine | None = None  # the unit vectors, made on first use

    @property
    def search(self) -> ExactCosine:
        if self._search is None:
            self._search = ExactCosine(self.lsa.passage_vectors)
        return self._search

    def params(self) -> dict[str, Any]:
        return {**self.lsa.params(), "cutoff": self.cutoff, "depth": self.depth, "family": "dense"}

    def vector(self, query: Query) -> Any:
        return query.dense_vector("lsa", lambda: self.lsa.embed_tokens(query.tokens))

    def score_source(self, query: Query) -> ScoreSource:
        """Every chunk's cosine with the folded-in question."""
        return corpus_scores(self.index, cosines(query, "lsa", self.search, self.vector(query)))

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        vector = self.vector(query)
        idx, scores, removed = exact_top(query, "lsa", self.search, vector, self.depth, self.cutoff)
        notes = []
        if not vector.any():
            notes.append("no question word is in the LSA vocabulary: nothing to compare")
        if removed:
            notes.append(f"similarity cutoff {self.cutoff} removed {removed} hits")
        return hits_of(self.index, self.name, idx, scores), notes
