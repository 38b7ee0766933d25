"""Latent semantic analysis: the dense retriever that needs no download.

Deerwester et al. (1990). With X the TF-IDF term × passage matrix,
tfidf(t, d) = (1 + ln tf(t, d)) · ln(N / n(t)), each passage column scaled to unit length:

    X ≈ U_k S_k V_kᵀ            (truncated SVD, rank k)
    passage vectors: rows of V_k
    query fold-in:   q̂ = qᵀ U_k S_k⁻¹

The SVD is computed by randomized subspace iteration (Halko, Martinsson & Tropp 2011,
Algorithm 4.4) with a fixed seed, so the same corpus always gives the same model.
`variance_share[i] = s_i² / ‖X‖_F²` says how much of the corpus each dimension keeps.

Above `fit_sample` passages the SVD is fitted on a seeded random sample of that many
passages (Deerwester's fold-in then places every passage: v = x U_k S_k⁻¹, the same
formula as a query), so ingest memory and time stop growing with the corpus beyond the
sample; `params()["fitted_on"]` records how many passages the fit saw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import TermCounts

if TYPE_CHECKING:  # scipy is imported where a model is fitted: folding in a question needs none
    import scipy.sparse as sp


def randomized_svd(x: sp.spmatrix, k: int, power_iterations: int = 4, oversample: int = 10,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U (m×k), s (k), Vᵀ (k×n) of the sparse matrix x by randomized subspace iteration."""
    m, n = x.shape
    rank = min(k + oversample, m, n)
    rng = np.random.default_rng(seed)
    omega = rng.standard_normal((n, rank))
    q, _ = np.linalg.qr(x @ omega)
    for _ in range(power_iterations):
        z, _ = np.linalg.qr(x.T @ q)
        q, _ = np.linalg.qr(x @ z)
    small = (x.T @ q).T  # = qᵀ x, rank × n
    u_small, s, vt = np.linalg.svd(small, full_matrices=False)
    u = q @ u_small
    k = min(k, s.size)
    # fix each singular vector's sign so the result does not depend on the LAPACK build
    signs = np.sign(u[np.argmax(np.abs(u[:, :k]), axis=0), np.arange(k)])
    signs[signs == 0] = 1.0
    return u[:, :k] * signs, s[:k], vt[:k] * signs[:, None]


def _column_slices(indptr: np.ndarray, step: int = 1 << 22):  # type: ignore[no-untyped-def]
    """(first term, end term, first count, end count) of consecutive column ranges of about
    `step` counts each (at least one column)."""
    n = indptr.size - 1
    lo = 0
    while lo < n:
        hi = min(max(int(np.searchsorted(indptr, indptr[lo] + step, side="right")) - 1, lo + 1), n)
        yield lo, hi, int(indptr[lo]), int(indptr[hi])
        lo = hi


class LSA:
    """An LSA model fitted on a corpus's term counts; embeds queries by fold-in."""

    def __init__(self, dim: int = 256, power_iterations: int = 4, seed: int = 0,
                 fit_sample: int | None = None, fitted_on: int | None = None) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ConfigError(f"[lsa] dim must be a whole number of at least 1, got {dim!r}",
                              "set [lsa] dim = 64 (the default) or another positive number")
        if not isinstance(power_iterations, int) or power_iterations < 0:
            raise ConfigError(f"[lsa] power_iterations must be a whole number ≥ 0, got "
                              f"{power_iterations!r}", "set [lsa] power_iterations = 4 (the default)")
        self.dim = dim
        self.power_iterations = power_iterations
        self.seed = seed
        self.fit_sample = fit_sample
        self.fitted_on = fitted_on
        self.vocab: dict[str, int] = {}
        self.idf = np.empty(0, dtype=np.float32)
        self.term_vectors = np.empty((0, 0), dtype=np.float32)  # U_k S_k⁻¹, terms × k
        self.passage_vectors = np.empty((0, 0), dtype=np.float32)  # V_k, passages × k
        self.variance_share = np.empty(0, dtype=np.float32)
        self.analyzer: Callable[[str], list[str]] | None = None

    @property
    def name(self) -> str:
        return f"lsa-{self.dim}"

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"dim": self.dim, "power_iterations": self.power_iterations,
                               "seed": self.seed}
        if self.fit_sample is not None:
            out["fit_sample"] = self.fit_sample
        if self.fitted_on is not None:
            out["fitted_on"] = self.fitted_on
        return out

    def fit(self, counts: TermCounts) -> "LSA":
        n_docs = counts.columns.shape[0]
        doc_freq = np.diff(counts.columns.indptr).astype(np.float64)
        self.idf = np.log(n_docs / np.maximum(doc_freq, 1.0)).astype(np.float32)
        self.vocab = counts.vocab
        if self.fit_sample is not None and n_docs > self.fit_sample:
            rng = np.random.default_rng(self.seed)
            return self._fit_sample(counts, np.sort(rng.choice(n_docs, size=self.fit_sample, replace=False)))
        x = self._weigh(counts.tf.tocsr())  # passages × terms
        total = float(x.multiply(x).sum())
        xt = x.T.tocsr()
        del x  # only the terms × passages copy is needed from here: memory, not numbers
        u, s, vt = self._svd(xt, total)
        self.passage_vectors = vt.T.astype(np.float32)
        self.fitted_on = n_docs
        return self

    def _svd(self, xt: sp.csr_matrix, total: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        u, s, vt = randomized_svd(xt, self.dim, self.power_iterations, seed=self.seed)
        keep = s > 1e-10
        u, s, vt = u[:, keep], s[keep], vt[keep]
        self.term_vectors = (u / s).astype(np.float32)
        self.variance_share = (s**2 / total if total else s * 0).astype(np.float32)
        return u, s, vt

    def _fit_sample(self, counts: TermCounts, sample: np.ndarray) -> "LSA":
        """The SVD of the sampled passages, then every passage folded in. Works on the
        term counts' own CSC arrays in column slices: the only full-size copy is one
        float32 weight per count (no CSR copy of the corpus)."""
        import scipy.sparse as sp

        tf = counts.columns
        n_docs, n_terms = tf.shape
        indptr = np.asarray(tf.indptr)
        weights = np.empty(tf.data.size, dtype=np.float32)  # (1 + ln tf) · idf, per count
        squares = np.zeros(n_docs)  # per passage: Σ weight², for unit length
        in_sample = np.zeros(n_docs, dtype=bool)
        in_sample[sample] = True
        kept = np.empty(tf.data.size, dtype=bool)  # counts of sampled passages
        for lo, hi, a, b in _column_slices(indptr):
            term = np.repeat(np.arange(lo, hi), np.diff(indptr[lo:hi + 1]))
            rows = np.asarray(tf.indices[a:b])
            w = (1.0 + np.log(np.asarray(tf.data[a:b], dtype=np.float64))) * self.idf[term]
            weights[a:b] = w
            squares += np.bincount(rows, weights=w * w, minlength=n_docs)
            kept[a:b] = in_sample[rows]
        norms = np.sqrt(squares)
        norms[norms == 0] = 1.0
        where = np.flatnonzero(kept)
        del kept
        columns = np.searchsorted(indptr, where, side="right") - 1
        sample_indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(columns, minlength=n_terms), out=sample_indptr[1:])
        rank = np.full(n_docs, -1, dtype=np.int64)
        rank[sample] = np.arange(sample.size)
        rows = np.asarray(tf.indices)[where]
        x = sp.csc_matrix((weights[where].astype(np.float64) / norms[rows], rank[rows], sample_indptr),
                          shape=(sample.size, n_terms))  # the sampled passages, unit length
        del where, columns, rows
        total = float(np.dot(x.data, x.data))
        xt = x.T.tocsr()
        del x
        self._svd(xt, total)
        del xt
        # fold-in v = x U_k S_k⁻¹ of every passage: (weights · term vectors) / its norm
        weighted = sp.csc_matrix((weights, tf.indices, tf.indptr), shape=tf.shape)
        self.passage_vectors = np.asarray(weighted @ self.term_vectors, dtype=np.float32)
        self.passage_vectors /= norms[:, None].astype(np.float32)
        self.fitted_on = int(sample.size)
        return self

    def _weigh(self, tf: sp.csr_matrix) -> sp.csr_matrix:
        import scipy.sparse as sp

        x = tf.astype(np.float64)
        x.data = 1.0 + np.log(x.data)
        x = x @ sp.diags(self.idf.astype(np.float64))
        norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ x)

    def embed_tokens(self, tokens: list[str]) -> np.ndarray:
        """Fold in an analysed text: qᵀ U_k S_k⁻¹ with q its TF-IDF vector (zero if no known term)."""
        ids = [self.vocab[t] for t in tokens if t in self.vocab]
        vec = np.zeros(self.term_vectors.shape[1], dtype=np.float32)
        if not ids:
            return vec
        uniq, counts = np.unique(np.asarray(ids), return_counts=True)
        weights = (1.0 + np.log(counts)) * self.idf[uniq]
        norm = np.linalg.norm(weights)
        if norm == 0:
            return vec
        return ((weights / norm) @ self.term_vectors[uniq]).astype(np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        if self.analyzer is None:
            raise RuntimeError("LSA.embed_query needs the index's analyzer; load the model through the index")
        return self.embed_tokens(self.analyzer(text))

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        if self.analyzer is None:
            raise RuntimeError("LSA.embed_passages needs the index's analyzer")
        return np.stack([self.embed_tokens(self.analyzer(t)) for t in texts]) if texts else \
            np.empty((0, self.term_vectors.shape[1]), dtype=np.float32)

    # storage -------------------------------------------------------------------------

    def arrays(self) -> dict[str, np.ndarray]:
        return {"idf": self.idf, "term_vectors": self.term_vectors,
                "passage_vectors": self.passage_vectors, "variance_share": self.variance_share}

    @classmethod
    def from_arrays(cls, params: dict[str, Any], vocab: dict[str, int],
                    arrays: dict[str, np.ndarray]) -> "LSA":
        model = cls(**params)
        model.vocab = vocab
        model.idf = arrays["idf"]
        model.term_vectors = arrays["term_vectors"]
        model.passage_vectors = arrays["passage_vectors"]
        model.variance_share = arrays["variance_share"]
        return model
