"""Features of a candidate chunk for a question, for the learned reranker.

| name | value |
|---|---|
| bm25 | BM25 score of the chunk for the question |
| bm25_ratio | that score divided by the best BM25 score among the candidates (scores are not comparable across questions; ratios are) |
| coverage | share of the question's terms that occur in the chunk (its row of the term counts: the indexed text, which with `context_header` includes the title and headings) |
| dense | cosine of question and chunk in the LSA space (0 without LSA) |
| inv_rank | 1 / rank in the list the reranker receives |
| identifier | share of the question's identifiers (E-4107, TX-200) that the chunk contains |
| heading | share of the question's terms found in the document title and heading path |
| age | years between the document's date and the newest dated document (0 when undated) |
| superseded | 1 when another indexed document supersedes this one |
| position | the chunk's position in its document, 0 (first) to 1 (last) |
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.store.base import Index, parse_date

FEATURES = ("bm25", "bm25_ratio", "coverage", "dense", "inv_rank", "identifier", "heading", "age",
            "superseded", "position")
CACHE_CHUNKS = 10_000  # chunks whose per-chunk facts are kept between questions (small: ~1 KB each)


class FeatureMaker:
    """Computes FEATURES for candidates. Nothing is prepared per chunk when it is built, so
    building one costs nothing however large the index: coverage is read from the term
    counts' columns, a chunk's heading terms and document facts are computed the first
    time it is a candidate (and kept, up to CACHE_CHUNKS chunks), and its words are
    analysed only for a question that names an identifier."""

    def __init__(self, index: Index, bm25: Any) -> None:
        self.index = index
        self.bm25 = bm25
        self.newest = index.newest_date()
        self.old = index.superseded()
        # the facts depend on the index alone: an index that keeps them (a sweep's) shares
        # them among the pipelines of all its configurations
        kept = getattr(index, "feature_facts", None)
        self._cache: dict[int, tuple[float, float, float, set[str]]] = {} if kept is None else kept

    def chunk_facts(self, row: int) -> tuple[float, float, float, set[str]]:
        """(age, superseded, position, heading terms) of chunk `row`."""
        got = self._cache.get(row)
        if got is None:
            index, analyzer = self.index, self.index.analyzer
            c = index.chunks[row]
            doc = index.documents[c.doc_id]
            date = parse_date(doc.metadata.get("date")) if doc.metadata.get("date") else None
            age = (self.newest - date).days / 365.25 if self.newest and date else 0.0
            got = (age, float(c.doc_id in self.old), c.position / max(index.chunks_in(c.doc_id) - 1, 1),
                   set(analyzer(" ".join([doc.title, *c.heading_path]))))
            if len(self._cache) >= CACHE_CHUNKS:
                self._cache.pop(next(iter(self._cache)))
            self._cache[row] = got
        return got

    def coverage(self, stems: set[str], rows: np.ndarray) -> np.ndarray:
        """|question terms ∩ chunk terms| / |question terms| for each row, by a binary search
        of the rows in each question term's column of the term counts."""
        if not stems or rows.size == 0:
            return np.zeros(rows.size)
        tf = self.index.counts.columns
        vocab = self.index.counts.vocab
        found = np.zeros(rows.size)
        for term in stems:
            t = vocab.get(term)
            if t is None:
                continue
            column = tf.indices[tf.indptr[t]:tf.indptr[t + 1]]
            if column.size == 0:
                continue
            at = np.minimum(np.searchsorted(column, rows), column.size - 1)
            found += column[at] == rows
        return found / len(stems)

    def matrix(self, query: Query, hits: Sequence[Hit]) -> np.ndarray:
        """(len(hits), len(FEATURES)) feature rows, in FEATURES order."""
        idx = np.array([self.index.position[h.chunk_id] for h in hits], dtype=np.int64)
        facts = [self.chunk_facts(int(i)) for i in idx]
        bm25 = query.bm25_scores(self.bm25)[idx]
        dense = np.zeros(len(idx))
        lsa = self.index.lsa
        if lsa is not None:
            q = query.dense_vector("lsa", lambda: lsa.embed_tokens(query.tokens))
            norm = np.linalg.norm(q)
            if norm > 0:
                vecs = np.asarray(lsa.passage_vectors[idx])
                dense = vecs @ q / (np.linalg.norm(vecs, axis=1) * norm + 1e-12)
        analyzer = self.index.analyzer
        words = analyzer.words(query.question)
        identifiers = {w for w in words if any(ch.isdigit() for ch in w) and any(ch in "-./" for ch in w)}
        stems = set(query.tokens)
        if identifiers:  # only such a question needs the candidates' words
            chunks = self.index.chunks
            ident = np.array([len(identifiers & set(analyzer.words(chunks[int(i)].text))) / len(identifiers)
                              for i in idx])
        else:
            ident = np.zeros(len(idx))
        heading = np.array([len(stems & f[3]) / len(stems) if stems else 0.0 for f in facts])
        inv_rank = 1.0 / np.array([h.rank for h in hits], dtype=np.float64)
        ratio = bm25 / bm25.max() if bm25.size and bm25.max() > 0 else np.zeros(len(idx))
        cover = self.coverage(stems, idx)

        def column(k: int) -> np.ndarray:
            return np.array([f[k] for f in facts], dtype=np.float64) if facts else np.zeros(0)

        return np.column_stack([bm25, ratio, cover, dense, inv_rank, ident, heading, column(0),
                                column(1), column(2)])
