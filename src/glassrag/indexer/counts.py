"""Step 3 of an ingest: every chunk's term counts, the base every index has (BM25 reads them,
and LSA is fitted on them).

Rows of the previous term counts serve the chunks of unchanged documents: only new and changed
documents' chunks are analysed (same chunk id, document and settings: same tokens), one at a
time, none kept.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from glassrag.config import Config
from glassrag.indexer.diff import Before
from glassrag.ingest.report import Progress
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import Columns, TermCounts
from glassrag.schema import Chunk
from glassrag.store.base import Index


def count_terms(chunks: Sequence[Chunk], text_of: Callable[[Chunk], str], before: Before, config: Config,
                changed: set[str], progress: Progress | None,
                analyse: Callable[[Iterable[str], Analyzer], Iterable[list[str]]] | None = None) -> TermCounts:
    """The term counts of `chunks` (rows in their order), analysed with [analyze]'s settings;
    rows of the previous index's counts reused for the chunks of documents not in `changed`
    when chunks are cut and analysed the same way. `analyse` turns the texts to analyse into
    their tokens, in order (here by default; on a cluster: glassrag/indexer/work.py)."""
    previous = before.previous
    analyzer = Analyzer(config.analyze.stopwords, config.analyze.stem, config.analyze.identifiers)
    reuse = previous is not None and before.same_chunking and previous.config.analyze == config.analyze
    old_rows = previous_rows(previous, chunks, changed) if reuse and previous is not None \
        else np.full(len(chunks), -1, dtype=np.int64)
    fresh = np.flatnonzero(old_rows < 0)

    def texts() -> Iterator[str]:  # one chunk's text and tokens at a time: none are kept
        for n, i in enumerate(fresh.tolist(), 1):
            if progress and n % 500 == 0:
                progress("analyse", n, len(fresh))
            yield text_of(chunks[i])

    counts = TermCounts.build(analyse(texts(), analyzer) if analyse else map(analyzer, texts()))
    if previous is not None and fresh.size < len(chunks):
        counts = merge_counts(previous.counts, old_rows, counts)
    return counts


def previous_rows(previous: Index, chunks: Sequence[Chunk], changed: set[str]) -> np.ndarray:
    """For each chunk, its row in `previous` when its document is unchanged, else -1."""
    out = np.full(len(chunks), -1, dtype=np.int64)
    position = previous.position
    for i, c in enumerate(chunks):
        if c.doc_id not in changed:
            out[i] = position.get(c.id, -1)
    return out


def merge_counts(old: TermCounts, old_rows: np.ndarray, fresh: TermCounts) -> TermCounts:
    """Term counts for chunks in order: row i is `old`'s row old_rows[i] where that is ≥ 0,
    else the next row of `fresh` (the chunks that were analysed). The vocabulary keeps the
    old order, appends new terms, and drops terms no chunk contains any more."""
    vocab = dict(old.vocab)
    for t in fresh.vocab:
        vocab.setdefault(t, len(vocab))
    width = len(vocab)
    keep = np.flatnonzero(old_rows >= 0)
    new = np.flatnonzero(old_rows < 0)
    kept = old.tf.tocsr()[old_rows[keep]]
    kept.resize((kept.shape[0], width))
    remap = np.array([vocab[t] for t in fresh.vocab], dtype=np.int32)
    added = fresh.tf.tocsr()
    added = sp.csr_matrix((added.data, remap[added.indices] if added.nnz else added.indices,
                           added.indptr), shape=(added.shape[0], width))
    stacked = sp.vstack([kept, added], format="csr", dtype=np.float32)
    order = np.empty(len(old_rows), dtype=np.int64)
    order[keep] = np.arange(keep.size)
    order[new] = keep.size + np.arange(new.size)
    tf = stacked[order]
    used = np.flatnonzero(np.bincount(tf.indices, minlength=width) > 0)
    terms = sorted(vocab, key=vocab.get)
    tf = tf[:, used].tocsc()
    tf.sort_indices()
    tf.indices = tf.indices.astype(np.int32, copy=False)
    doc_len = np.empty(len(old_rows), dtype=np.float32)
    doc_len[keep] = np.asarray(old.doc_len)[old_rows[keep]]
    doc_len[new] = fresh.doc_len
    return TermCounts({terms[j]: k for k, j in enumerate(used.tolist())}, Columns.of(tf), doc_len)
