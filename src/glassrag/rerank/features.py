"""Features of a candidate chunk for a question, for the learned reranker.

| name | value |
|---|---|
| bm25 | BM25 score of the chunk for the question |
| bm25_ratio | that score divided by the best BM25 score among the candidates (scores are not comparable across questions; ratios are) |
| coverage | share of the question's terms that occur in the chunk |
| dense | cosine of question and chunk in the LSA space (0 without LSA) |
| inv_rank | 1 / rank in the list the reranker receives |
| identifier | share of the question's identifiers (E-4107, TX-200) that the chunk contains |
| heading | share of the question's terms found in the document title and heading path |
| age | years between the document's date and the newest dated document (0 when undated) |
| superseded | 1 when another indexed document supersedes this one |
| position | the chunk's position in its document, 0 (first) to 1 (last) |
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Sequence

import numpy as np

from glassrag.query import Query
from glassrag.rerank.versions import superseded
from glassrag.schema import Hit
from glassrag.store.base import Index

FEATURES = ("bm25", "bm25_ratio", "coverage", "dense", "inv_rank", "identifier", "heading", "age",
            "superseded", "position")


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


class FeatureMaker:
    """Computes FEATURES for candidates; per-chunk constants are prepared once per index."""

    def __init__(self, index: Index, bm25: Any) -> None:
        self.index = index
        self.bm25 = bm25
        analyzer = index.analyzer
        dates = {d.id: _date(d.metadata.get("date")) for d in index.documents.values()}
        newest = max((d for d in dates.values() if d), default=None)
        old = superseded(index.documents)
        counts: dict[str, int] = {}
        for c in index.chunks:
            counts[c.doc_id] = counts.get(c.doc_id, 0) + 1
        n = len(index.chunks)
        self.age = np.zeros(n)
        self.superseded = np.zeros(n)
        self.position = np.zeros(n)
        self.heading_terms: list[set[str]] = []
        self.terms: list[set[str]] = []
        self.stems: list[set[str]] = []
        for i, c in enumerate(index.chunks):
            doc = index.documents[c.doc_id]
            if newest and dates[c.doc_id]:
                self.age[i] = (newest - dates[c.doc_id]).days / 365.25
            self.superseded[i] = float(c.doc_id in old)
            self.position[i] = c.position / max(counts[c.doc_id] - 1, 1)
            self.heading_terms.append(set(analyzer(" ".join([doc.title, *c.heading_path]))))
            self.terms.append(set(analyzer.words(c.text)))
            self.stems.append(set(analyzer(c.text)))

    def matrix(self, query: Query, hits: Sequence[Hit]) -> np.ndarray:
        """(len(hits), len(FEATURES)) feature rows, in FEATURES order."""
        idx = np.array([self.index.position[h.chunk_id] for h in hits], dtype=np.int64)
        bm25 = query.bm25_scores(self.bm25)[idx]
        dense = np.zeros(len(idx))
        lsa = self.index.lsa
        if lsa is not None:
            q = query.dense_vector("lsa", lambda: lsa.embed_tokens(query.tokens))
            norm = np.linalg.norm(q)
            if norm > 0:
                vecs = lsa.passage_vectors[idx]
                dense = vecs @ q / (np.linalg.norm(vecs, axis=1) * norm + 1e-12)
        words = self.index.analyzer.words(query.question)
        identifiers = {w for w in words if any(ch.isdigit() for ch in w) and any(ch in "-./" for ch in w)}
        stems = set(query.tokens)
        ident = np.array([len(identifiers & self.terms[i]) / len(identifiers) if identifiers else 0.0
                          for i in idx])
        heading = np.array([len(stems & self.heading_terms[i]) / len(stems) if stems else 0.0
                            for i in idx])
        inv_rank = 1.0 / np.array([h.rank for h in hits], dtype=np.float64)
        ratio = bm25 / bm25.max() if bm25.size and bm25.max() > 0 else np.zeros(len(idx))
        cover = np.array([len(stems & self.stems[i]) / len(stems) if stems else 0.0 for i in idx])
        return np.column_stack([bm25, ratio, cover, dense, inv_rank, ident, heading, self.age[idx],
                                self.superseded[idx], self.position[idx]])
