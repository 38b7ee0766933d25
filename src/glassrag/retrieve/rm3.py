"""BM25 with pseudo-relevance feedback (RM3) as a retriever stage, `bm25-rm3`.

A first BM25 pass takes the top `docs` chunks as if they were relevant; the relevance model
(RM1, Lavrenko & Croft 2001) spreads their words' weight by each chunk's share of the
first-pass score,

    P(t|R) ∝ Σ_D  s(D) / Σ_D' s(D')  ×  tf(t, D) / |D|,

keeps its `terms` heaviest words, and RM3 (Abdul-Jaleel et al. 2004) mixes it with the
question's own words:

    w(t) = λ · P(t|Q) + (1 − λ) · P(t|R),      P(t|Q) = count(t in Q) / |Q|

The second pass scores every chunk by Σ_t w(t) · bm25(t, D) with the same k1 and b. The
defaults (10 chunks, 10 terms, λ = 0.5) are Anserini's/Pyserini's for BEIR. The trace notes
which words were added.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glassrag.config import Config
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.query import Query
from glassrag.retrieve.base import Ranks, corpus_scores, hits_of
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, ScoreSource
from glassrag.store.base import Index


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "BM25", ("BM25 match strength of the question expanded with pseudo-relevance feedback (RM3): "
                    "Σ w(t) · bm25(t, passage) over the question's words and the words added from the first "
                    "pass's top passages. Unbounded, on this index's scale: compare it within one question, "
                    f"not across questions. {NOT_A_PROBABILITY}")


class RM3Retriever(Ranks):
    name = "bm25-rm3"
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25) -> None:
        self.index, self.bm25 = index, bm25
        s = config.bm25
        self.docs, self.terms, self.weight = s.rm3_docs, s.rm3_terms, s.rm3_weight
        self.depth = config.retrieve.depth
        self.searched = len(index.chunks)
        self._words: list[str] | None = None
        self._rows: Any = None  # the term counts by chunk (CSR), made on first use

    def params(self) -> dict[str, Any]:
        return {**self.bm25.params(), "fb_docs": self.docs, "fb_terms": self.terms,
                "original_weight": self.weight, "depth": self.depth, "family": "lexical"}

    def expansion(self, query: Query) -> dict[int, float]:
        """term id -> w(t), the expanded query."""
        ids = self.bm25.term_ids(query.tokens)
        if not ids:
            return {}
        question = {t: ids.count(t) / len(ids) for t in set(ids)}
        first = query.bm25_scores(self.bm25)
        rows, scores = top_k(first, self.docs)
        if not len(rows) or float(scores.sum()) <= 0.0:
            return question
        if self._rows is None:
            self._rows = self.index.counts.tf.tocsr()
        tf = self._rows[rows]
        lengths = np.maximum(self.index.counts.doc_len[rows].astype(np.float64), 1.0)
        share = scores.astype(np.float64) / float(scores.sum())
        relevance = np.asarray((tf.multiply((share / lengths)[:, None])).sum(axis=0)).ravel()
        kept = np.argsort(-relevance, kind="stable")[: self.terms]
        kept = kept[relevance[kept] > 0]
        total = float(relevance[kept].sum()) or 1.0
        model = {int(t): float(relevance[t]) / total for t in kept}
        return {t: self.weight * question.get(t, 0.0) + (1.0 - self.weight) * model.get(t, 0.0)
                for t in set(question) | set(model)}

    def scores(self, weights: dict[int, float]) -> np.ndarray:
        """Σ_t w(t) · bm25(t, D) for every chunk D (float32)."""
        cols = self.bm25.scores
        out = np.zeros(cols.shape[0], dtype=np.float32)
        for t, w in weights.items():
            a, b = cols.indptr[t], cols.indptr[t + 1]
            out[cols.indices[a:b]] += np.float32(w) * cols.data[a:b]
        return out

    def expanded_scores(self, query: Query, weights: dict[int, float] | None = None) -> np.ndarray:
        """Every chunk's score for the expanded question, once per question."""
        scores: np.ndarray = query.cached(f"sims:{self.name}",
                                          lambda: self.scores(self.expansion(query) if weights is None else weights))
        return scores

    def score_source(self, query: Query) -> ScoreSource:
        return corpus_scores(self.index, self.expanded_scores(query))

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        weights = self.expansion(query)
        idx, scores = top_k(self.expanded_scores(query, weights), self.depth)
        words = self._vocabulary()
        asked = set(self.bm25.term_ids(query.tokens))
        added = sorted(((w, t) for t, w in weights.items() if t not in asked), reverse=True)
        notes = [f"expanded with: {', '.join(f'{words[t]} {w:.3f}' for w, t in added)}"] if added else []
        return hits_of(self.index, self.name, idx, scores), notes

    def _vocabulary(self) -> list[str]:
        if self._words is None:
            words = [""] * len(self.index.counts.vocab)
            for word, t in self.index.counts.vocab.items():
                words[t] = word
            self._words = words
        return self._words
