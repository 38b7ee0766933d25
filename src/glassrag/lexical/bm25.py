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
from array import array
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np

if TYPE_CHECKING:  # scipy is imported where sparse algebra is done: answering a question needs none
    import scipy.sparse as sp


class Columns:
    """A documents × terms matrix as compressed columns: column t's rows are `indices[indptr[t]:
    indptr[t+1]]` (sorted) and their values the same slice of `data`. Plain arrays, so they can
    be memory-mapped from the index folder; `matrix()` is the same arrays as a scipy CSC matrix
    for sparse algebra (and imports scipy, which a question never needs: 0.15 CPU s)."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                 shape: tuple[int, int]) -> None:
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, tuple(shape)

    @classmethod
    def of(cls, matrix: Any) -> "Columns":
        """The columns of a scipy sparse matrix (converted to CSC if it is not)."""
        m = matrix.tocsc() if matrix.format != "csc" else matrix
        if not m.has_sorted_indices:
            m = m.sorted_indices()
        return cls(m.indptr, m.indices, m.data, m.shape)

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1]) if len(self.indptr) else 0

    def matrix(self) -> "sp.csc_matrix":
        import scipy.sparse as sp

        return sp.csc_matrix((self.data, self.indices, self.indptr), shape=self.shape)


@dataclass(frozen=True)
class TermCounts:
    """What BM25 needs from a corpus: a vocabulary, raw term counts (documents × terms,
    `columns`) and document lengths. This is what an index stores; scores are derived on load.
    `tf` is the counts as a scipy CSC matrix, made on first use."""

    vocab: dict[str, int]
    columns: Columns
    doc_len: np.ndarray

    @cached_property
    def tf(self) -> "sp.csc_matrix":
        return self.columns.matrix()

    @classmethod
    def build(cls, token_lists: Iterable[list[str]], block: int = 20_000) -> "TermCounts":
        """Counts from analysed documents, read one at a time. Term ids go into one flat
        int32 buffer; every `block` documents the buffer becomes a CSR block (duplicates
        summed), so memory holds about one block of tokens plus the counts, never a
        Python object per document."""
        import scipy.sparse as sp

        vocab: dict[str, int] = {}
        blocks: list[sp.csr_matrix] = []
        ids = array("i")
        lengths = array("i")
        start = 0  # first document of the current block

        def flush() -> None:
            nonlocal ids, start
            n = len(lengths) - start
            if n == 0:
                return
            cols = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.empty(0, np.int32)
            rows = np.repeat(np.arange(n, dtype=np.int32), np.frombuffer(lengths, np.int32)[start:])
            m = sp.coo_matrix((np.ones(cols.size, dtype=np.float32), (rows, cols)),
                              shape=(n, len(vocab))).tocsr()
            m.sum_duplicates()
            blocks.append(m)
            ids = array("i")
            start = len(lengths)

        for tokens in token_lists:
            ids.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
            lengths.append(len(tokens))
            if len(lengths) - start >= block:
                flush()
        flush()
        return cls(vocab, csc_from_row_blocks(blocks, len(vocab)),
                   np.frombuffer(lengths, np.int32).astype(np.float32))


def csc_from_row_blocks(blocks: list["sp.csr_matrix"], width: int) -> Columns:
    """Stack CSR row blocks into one CSC matrix (rows sorted within each column), writing
    each block's entries straight into their final places and letting the block go: the
    peak is the blocks plus the result, not the three copies of vstack and tocsc."""
    n_rows = sum(m.shape[0] for m in blocks)
    col_counts = np.zeros(width, dtype=np.int64)
    for m in blocks:
        col_counts += np.bincount(m.indices, minlength=width)
    indptr = np.zeros(width + 1, dtype=np.int64)
    np.cumsum(col_counts, out=indptr[1:])
    data = np.empty(int(indptr[-1]), dtype=np.float32)
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    cursor = indptr[:-1].copy()
    offset = 0
    while blocks:
        m = blocks.pop(0)
        rows = np.repeat(np.arange(offset, offset + m.shape[0], dtype=np.int32), np.diff(m.indptr))
        order = np.argsort(m.indices, kind="stable")  # by column; rows stay in order
        cols = m.indices[order]
        counts = np.bincount(cols, minlength=width)
        first = np.cumsum(counts) - counts
        pos = cursor[cols] + (np.arange(cols.size) - first[cols])
        data[pos] = m.data[order]
        indices[pos] = rows[order]
        cursor += counts
        offset += m.shape[0]
    return Columns(indptr, indices, data, (n_rows, width))


def idf_lucene(n_docs: int, doc_freq: np.ndarray) -> np.ndarray:
    """IDF(t) = ln((N - n + 0.5) / (n + 0.5) + 1): never negative, unlike Robertson's."""
    return np.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5) + 1.0)


def term_weight(tf: np.ndarray, doc_len: np.ndarray, avgdl: float, k1: float,
                b: float) -> np.ndarray:
    """tf · (k1 + 1) / (tf + k1 · (1 - b + b · |d| / avgdl))."""
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc_len / avgdl))


@dataclass(frozen=True)
class CorpusStats:
    """The corpus-wide numbers BM25 reads beside a chunk's own counts: N (`n_docs`, chunks),
    avgdl and every term's document frequency n(t) (`doc_freq`, by term id). Those of the counts
    themselves by default (`of`); a shard of a larger index is given its whole index's
    (glassrag/shard/), so its weights and its scores are the whole index's, bit for bit."""

    n_docs: int
    avgdl: float
    doc_freq: np.ndarray

    @classmethod
    def of(cls, counts: TermCounts) -> "CorpusStats":
        n_docs = counts.columns.shape[0]
        return cls(n_docs, float(counts.doc_len.mean()) if n_docs else 0.0, np.diff(counts.columns.indptr))


def bm25_weights(counts: TermCounts, k1: float, b: float, stats: CorpusStats | None = None) -> np.ndarray:
    """IDF(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl)) for every stored
    count, in the order of `counts.columns.data` (float32): what a query sums. Ingest stores these
    for the configured k1 and b, so an index opens without computing them. N, avgdl and n(t) are
    `stats` (the counts' own when None). Each weight is computed alone, so a shard's weights under
    its whole index's stats equal that index's weights of the same counts exactly."""
    tf = counts.columns
    stats = stats or CorpusStats.of(counts)
    avgdl = stats.avgdl
    idf = idf_lucene(stats.n_docs, np.asarray(stats.doc_freq).astype(np.float64))
    out = np.empty(tf.data.size, dtype=np.float32)
    indptr = np.asarray(tf.indptr)
    step = WEIGHT_SLICE
    lo = 0
    while lo < tf.shape[1]:
        hi = int(np.searchsorted(indptr, indptr[lo] + step, side="right")) - 1
        hi = min(max(hi, lo + 1), tf.shape[1])  # at least one column a slice
        s, e = int(indptr[lo]), int(indptr[hi])
        term = np.repeat(np.arange(lo, hi, dtype=np.int32), np.diff(indptr[lo:hi + 1]))
        w = term_weight(np.asarray(tf.data[s:e], dtype=np.float64), counts.doc_len[tf.indices[s:e]],
                        max(avgdl, 1e-9), k1, b)
        out[s:e] = w * idf[term]
        lo = hi
    return out


class BM25:
    """Scores queries against TermCounts with parameters k1 and b. `weights`, when given,
    are `bm25_weights(counts, k1, b, stats)` as ingest stored them; `stats`, the corpus numbers
    (the counts' own when None; a shard's whole index's, glassrag/shard/)."""

    def __init__(self, counts: TermCounts, k1: float = 0.9, b: float = 0.4,
                 weights: np.ndarray | None = None, stats: CorpusStats | None = None) -> None:
        self.counts = counts
        self.k1 = float(k1)
        self.b = float(b)
        tf = counts.columns
        self.stats = stats or CorpusStats.of(counts)
        self.avgdl = self.stats.avgdl
        self.idf = idf_lucene(self.stats.n_docs, np.asarray(self.stats.doc_freq).astype(np.float64))
        if weights is None:
            weights = bm25_weights(counts, self.k1, self.b, self.stats)
        self.scores = Columns(tf.indptr, tf.indices, weights, tf.shape)  # term t's chunks and their BM25

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b}

    def term_ids(self, tokens: list[str]) -> list[int]:
        vocab = self.counts.vocab
        return [vocab[t] for t in tokens if t in vocab]

    def score_all(self, tokens: list[str]) -> np.ndarray:
        """BM25 of every document for one analysed query (float32, one per document)."""
        n_docs = self.scores.shape[0]
        out = np.zeros(n_docs, dtype=np.float32)
        indptr, indices, data = self.scores.indptr, self.scores.indices, self.scores.data
        ids = self.term_ids(tokens)
        if not ids:
            return out
        # a term's chunks are distinct, so a plain += is exact; the longest column (by n(t), so a
        # shard adds in its whole index's order and its float32 sums are that index's) is
        # assigned rather than added (no read of the zeros it replaces)
        df = self.stats.doc_freq
        longest = max(range(len(ids)), key=lambda j: df[ids[j]])
        t = ids[longest]
        out[indices[indptr[t]:indptr[t + 1]]] = data[indptr[t]:indptr[t + 1]]
        for j, t in enumerate(ids):
            if j != longest:
                a, b = indptr[t], indptr[t + 1]
                out[indices[a:b]] += data[a:b]
        return out

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
        return self.explain_many(tokens, [doc], max_terms)[0]

    def explain_many(self, tokens: list[str], docs: list[int],
                     max_terms: int | None = None) -> list[list[dict[str, Any]]]:
        """`explain` for each of `docs`, in one pass: the counts of the question's terms in
        these documents are read as one small matrix and every contribution

            n(t, q) · IDF(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))

        is computed at once (the same float64 operations, in the same order, as one at a time);
        only the rows kept become dicts."""
        occurrences: dict[str, int] = {}
        for t in tokens:
            occurrences[t] = occurrences.get(t, 0) + 1
        terms = list(occurrences)
        vocab = self.counts.vocab
        tids = [vocab.get(t) for t in terms]
        known = [j for j, tid in enumerate(tids) if tid is not None]
        at = np.asarray(docs, dtype=np.int64)
        tf = np.zeros((len(at), len(terms)), dtype=np.float64)
        if known and len(at):
            tf[:, known] = counts_at(self.counts.columns, at, [tids[j] for j in known])
        dl = np.asarray(self.counts.doc_len[at], dtype=np.float64)[:, None]
        idf = np.zeros(len(terms), dtype=np.float64)
        idf[known] = self.idf[[tids[j] for j in known]]
        n = np.array([occurrences[t] for t in terms], dtype=np.int64)
        with np.errstate(invalid="ignore", divide="ignore"):
            weight = np.where(tf > 0, term_weight(tf, dl, max(self.avgdl, 1e-9), self.k1, self.b), 0.0)
        contribution = n * idf * weight
        bounded = max_terms is not None and len(terms) > max_terms
        # per document, the max_terms largest contributions (a stable sort: ties keep query order)
        largest = np.argsort(-contribution, axis=1, kind="stable")[:, :max_terms].tolist() if bounded else None
        # the rows are built from Python lists (the same floats), not element by element from arrays
        n_, idf_, tf_, contribution_ = n.tolist(), idf.tolist(), tf.astype(np.int64).tolist(), contribution.tolist()
        return [self._rows(terms, tids, n_, idf_, tf_[i], contribution_[i], max_terms,
                           None if largest is None else largest[i]) for i in range(len(at))]

    @staticmethod
    def _rows(terms: list[str], tids: list[int | None], n: list[int], idf: list[float], tf: list[int],
              contribution: list[float], max_terms: int | None, largest: list[int] | None) -> list[dict[str, Any]]:
        """One document's explanation rows: every term's, or those of its `largest` contributions in
        query order and one row summing the rest."""
        if largest is None:
            keep: Any = range(len(terms))
            rest: list[int] = []
        else:
            kept = set(largest)
            keep, rest = sorted(kept), [j for j in range(len(terms)) if j not in kept]
        rows = []
        for j in keep:
            if tids[j] is None:
                rows.append({"term": terms[j], "idf": 0.0, "tf": 0, "occurrences": n[j], "contribution": 0.0,
                             "note": "not in the index"})
            else:
                rows.append({"term": terms[j], "idf": idf[j], "tf": tf[j], "occurrences": n[j],
                             "contribution": contribution[j]})
        if rest:
            rows.append({"term": f"({len(rest)} more terms)", "idf": 0.0, "tf": 0,
                         "occurrences": sum(n[j] for j in rest),
                         "contribution": sum([contribution[j] for j in rest]),  # in query order
                         "note": f"explanation bounded to {max_terms} terms; this row sums the other {len(rest)}"})
        return rows


def counts_at(columns: Columns, rows: np.ndarray, cols: list[int]) -> np.ndarray:
    """The dense block columns[rows, cols] (float64; zero where a row lacks the term): `rows`
    binary-searched in each column's sorted rows, without scipy."""
    out = np.zeros((len(rows), len(cols)), dtype=np.float64)
    if not len(rows):
        return out
    for j, t in enumerate(cols):
        a, b = int(columns.indptr[t]), int(columns.indptr[t + 1])
        held = columns.indices[a:b]
        at = np.searchsorted(held, rows)
        found = at < held.size
        found[found] = held[at[found]] == rows[found]
        out[found, j] = columns.data[a:b][at[found]]
    return out


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top k positive scores, best first; ties broken by lower index.

    Exact, and cheap on a million chunks: a threshold t is read off a strided sample
    (its r-th largest value, r sized so that about 3k chunks should reach it); when at
    least k chunks score ≥ t, the k-th largest score is ≥ t, so the top k are among them
    and only those few are sorted. Otherwise (rare: few positives, skewed samples) every
    positive score is partitioned."""
    if k <= 0 or scores.size == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    candidates = None
    step = scores.size // SAMPLE
    if step >= 2 and k * 4 < scores.size:
        sample = scores[::step]
        r = min(sample.size, 3 * k // step + 2)
        t = np.partition(sample, sample.size - r)[sample.size - r]
        if t > 0:
            above = np.flatnonzero(scores >= t)
            if above.size >= k:
                candidates = above
    if candidates is None:
        candidates = np.flatnonzero(scores > 0)
    if candidates.size > k:
        part = np.argpartition(-scores[candidates], k - 1)[:k]
        kth = scores[candidates[part]].min()
        candidates = candidates[scores[candidates] >= kth]  # every tie at the k-th score
    order = np.lexsort((candidates, -scores[candidates]))[:k]
    chosen = candidates[order]
    return chosen, scores[chosen]


SAMPLE = 20_000  # sample size of top_k's threshold
WEIGHT_SLICE = 1 << 22  # entries bm25_weights computes at a time: no float64 copy of every count
