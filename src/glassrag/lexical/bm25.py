"""BM25 as a sparse matrix of precomputed per-term scores (the bm25s design).

For a document d and query q (Lucene's variant, Robertson et al. 1994; Kamphuis et al.
2020, "Which BM25 do you mean?"):

    score(q, d) = Σ_{t ∈ q} IDF(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))
    IDF(t)      = ln((N - n(t) + 0.5) / (n(t) + 0.5) + 1)

N is the number of documents (chunks), n(t) how many contain t. Every non-zero
(document, term) score is computed once, so a query sums a few columns and the top k
come from `argpartition`. A term repeated in the query counts once per occurrence.
Defaults k1 = 0.9, b = 0.4 are Pyserini's BEIR settings (Thakur et al. 2021).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class TermCounts:
    """What BM25 needs from a corpus: a vocabulary, raw term counts (documents × terms,
    CSC) and document lengths. This is what an index stores; scores are derived on load."""

    vocab: dict[str, int]
    tf: sp.csc_matrix
    doc_len: np.ndarray

    @classmethod
    def build(cls, token_lists: Iterable[list[str]]) -> "TermCounts":
        """Counts from analysed documents, read one at a time: each document's tokens
        become (term, count) arrays at once, so memory holds counts, not tokens."""
        vocab: dict[str, int] = {}
        terms: list[np.ndarray] = []
        counts: list[np.ndarray] = []
        per_doc: list[int] = []  # distinct terms of each document
        lengths: list[int] = []
        for tokens in token_lists:
            ids = np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens), dtype=np.int64,
                              count=len(tokens))
            uniq, n = np.unique(ids, return_counts=True)
            terms.append(uniq)
            counts.append(n.astype(np.float32))
            per_doc.append(len(uniq))
            lengths.append(len(ids))
        n_docs = len(lengths)
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(per_doc, out=indptr[1:])
        tf = sp.csr_matrix(
            (np.concatenate(counts) if counts else np.empty(0, dtype=np.float32),
             np.concatenate(terms) if terms else np.empty(0, dtype=np.int64), indptr),
            shape=(n_docs, len(vocab)),
        ).tocsc()
        tf.sort_indices()
        return cls(vocab, tf, np.asarray(lengths, dtype=np.float32))


def idf_lucene(n_docs: int, doc_freq: np.ndarray) -> np.ndarray:
    """IDF(t) = ln((N - n + 0.5) / (n + 0.5) + 1): never negative, unlike Robertson's."""
    return np.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5) + 1.0)


def term_weight(tf: np.ndarray, doc_len: np.ndarray, avgdl: float, k1: float,
                b: float) -> np.ndarray:
    """tf · (k1 + 1) / (tf + k1 · (1 - b + b · |d| / avgdl))."""
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc_len / avgdl))


class BM25:
    """Scores queries against TermCounts with parameters k1 and b."""

    def __init__(self, counts: TermCounts, k1: float = 0.9, b: float = 0.4) -> None:
        self.counts = counts
        self.k1 = float(k1)
        self.b = float(b)
        tf = counts.tf
        n_docs = tf.shape[0]
        self.avgdl = float(counts.doc_len.mean()) if n_docs else 0.0
        doc_freq = np.diff(tf.indptr).astype(np.float64)
        self.idf = idf_lucene(n_docs, doc_freq)
        # each stored count becomes its contribution; CSC keeps a term's documents together
        lengths = counts.doc_len[tf.indices]
        weights = term_weight(tf.data.astype(np.float64), lengths, max(self.avgdl, 1e-9), k1, b)
        term_of_entry = np.repeat(np.arange(tf.shape[1]), np.diff(tf.indptr))
        self.scores = sp.csc_matrix(
            ((weights * self.idf[term_of_entry]).astype(np.float32), tf.indices, tf.indptr),
            shape=tf.shape,
        )
        self.scores.sort_indices()  # a term's documents in order: lookups use searchsorted

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b}

    def term_ids(self, tokens: list[str]) -> list[int]:
        vocab = self.counts.vocab
        return [vocab[t] for t in tokens if t in vocab]

    def score_all(self, tokens: list[str]) -> np.ndarray:
        """BM25 of every document for one analysed query (float32, one per document)."""
        n_docs = self.scores.shape[0]
        ids = self.term_ids(tokens)
        if not ids:
            return np.zeros(n_docs, dtype=np.float32)
        indptr, indices, data = self.scores.indptr, self.scores.indices, self.scores.data
        pos = np.concatenate([np.arange(indptr[t], indptr[t + 1]) for t in ids])
        return np.bincount(indices[pos], weights=data[pos], minlength=n_docs).astype(np.float32)

    def search(self, tokens: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices and scores of the top k documents with a score above zero, best first."""
        scores = self.score_all(tokens)
        return top_k(scores, k)

    def explain(self, tokens: list[str], doc: int, max_terms: int | None = None) -> list[dict[str, Any]]:
        """Each distinct query term's IDF, term frequency in the document, how often the
        query holds it, and its contribution (per occurrence × occurrences); the rows sum
        to the document's score.

        With `max_terms`, the `max_terms` largest contributions are kept, in query order,
        and one row `(N more terms)` carries the sum of the rest, so a question of
        thousands of terms gives a bounded explanation that still adds up."""
        occurrences: dict[str, int] = {}
        for t in tokens:
            occurrences[t] = occurrences.get(t, 0) + 1
        rows = []
        dl = float(self.counts.doc_len[doc])
        for t, n in occurrences.items():
            tid = self.counts.vocab.get(t)
            if tid is None:
                rows.append({"term": t, "idf": 0.0, "tf": 0, "occurrences": n, "contribution": 0.0,
                             "note": "not in the index"})
                continue
            tf = float(self.counts.tf[doc, tid])
            weight = term_weight(np.float64(tf), np.float64(dl), max(self.avgdl, 1e-9),
                                 self.k1, self.b) if tf else 0.0
            rows.append({"term": t, "idf": float(self.idf[tid]), "tf": int(tf), "occurrences": n,
                         "contribution": float(n * self.idf[tid] * weight)})
        if max_terms is None or len(rows) <= max_terms:
            return rows
        keep = set(sorted(range(len(rows)), key=lambda i: -rows[i]["contribution"])[:max_terms])
        rest = [r for i, r in enumerate(rows) if i not in keep]
        return [r for i, r in enumerate(rows) if i in keep] + [{
            "term": f"({len(rest)} more terms)", "idf": 0.0, "tf": 0,
            "occurrences": sum(r["occurrences"] for r in rest),
            "contribution": sum(r["contribution"] for r in rest),
            "note": f"explanation bounded to {max_terms} terms; this row sums the other {len(rest)}"}]


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k positive scores, best first; ties broken by lower index (stable)."""
    positive = np.flatnonzero(scores > 0)
    if positive.size == 0 or k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    if positive.size > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.lexsort((positive, -scores[positive]))
    chosen = positive[order]
    return chosen, scores[chosen]
