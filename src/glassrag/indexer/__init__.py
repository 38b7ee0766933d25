"""Building an index: walk, load, chunk, analyse, count terms, fit LSA, in that order.

Unchanged files (same path-derived id and content hash, same chunk settings) keep the
chunks they had; only new and changed files are parsed and chunked again. Documents and
chunks go to a spool on disk as they are read (glassrag/store/spool.py): what stays in
memory is their ids and offsets, the term counts and the LSA model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp

from glassrag import threads
from glassrag.chunk import make_chunker
from glassrag.chunk.document import DocumentChunker
from glassrag.chunk.header import indexed_text
from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.errors import IngestError
from glassrag.ingest import document_ids, file_hash, load_document, read_bytes, walk
from glassrag.ingest.beir import is_beir, load_beir_corpus
from glassrag.ingest.quality import check as check_quality
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import TermCounts
from glassrag.schema import Chunk, Document
from glassrag.store.base import Embedded, Index
from glassrag.store.spool import ChunkSpool, DocumentSpool, in_order

if TYPE_CHECKING:
    from glassrag.dense.neural import SentenceEmbedder


@dataclass
class IngestReport:
    """What an ingest did, file by file."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[IngestError] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    embedded: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> counts
    quality: dict[str, dict] = field(default_factory=dict)  # doc id -> extraction-quality check
    nothing_changed: bool = False  # the previous index is returned as it was: nothing to write
    unchanged_sources: dict[str, int] = field(default_factory=dict)  # BEIR corpus file -> documents

    def n_unchanged(self) -> int:
        return len(self.unchanged) + sum(self.unchanged_sources.values())


Progress = Callable[[str, int, int], None]


def build_index(paths: list[Path], config: Config, previous: Index | None = None,
                prune: bool = False, max_bytes: int | None = None,
                max_text: tuple[float, float] | None = None, progress: Progress | None = None, cache_dir: Path | None = None,
                spool_dir: Path | None = None) -> tuple[Index, IngestReport]:
    """Ingest `paths` into a new Index, reusing what `previous` already holds. Documents and
    chunks are spooled to unlinked files in `spool_dir` (the system's temporary folder
    when None). `max_text`: (MB, ratio) that bound each file's extracted text
    (ingest.text_limit; its defaults when None)."""
    threads.configure()  # LSA's QR steps on one BLAS thread (glassrag/threads.py)
    report = IngestReport()
    beir_paths = [p for p in paths if is_beir(p)]
    found = walk([p for p in paths if p not in beir_paths])
    report.failed.extend(found.problems)
    report.skipped.extend(found.skipped)
    chunker = make_chunker(config.chunk.chunker, size=config.chunk.size,
                           overlap=config.chunk.overlap, unit=config.chunk.unit)
    same_chunking = previous is not None and previous.config.chunk == config.chunk

    # what changed is decided from the stored content hashes alone; the previous index's
    # documents and chunks are read only when something did change
    old_hash: dict[str, str] = {}
    chunkless: set[str] = set()  # documents of `previous` that gave no chunk
    if previous is not None:
        hashes = previous.content_hashes()
        old_hash = hashes.to_dict() if hasattr(hashes, "to_dict") else dict(hashes)
        chunkless = {d for d in old_hash if previous.chunks_in(d) == 0} if not previous.stored \
            else set(previous.stored.chunkless)
    documents = DocumentSpool(spool_dir)  # the new and changed ones first, then those kept
    spool = ChunkSpool(spool_dir)
    chunks_by_doc: dict[str, tuple[int, int]] = {}  # doc id -> (first spooled chunk, count)
    new_docs: set[str] = set()

    def unchanged(doc_id: str, content_hash: str) -> bool:
        return same_chunking and old_hash.get(doc_id) == content_hash and doc_id not in chunkless

    ids = document_ids(found.files)
    seen: set[str] = set()
    for n, ((path, _root), doc_id) in enumerate(zip(found.files, ids), 1):
        if progress:
            progress("read", n, len(found.files))
        seen.add(doc_id)
        try:
            data = read_bytes(path, max_bytes) if max_bytes else read_bytes(path)
            if unchanged(doc_id, file_hash(data)):
                report.unchanged.append(doc_id)
                continue
            doc, warnings = load_document(path, doc_id, data, *(max_text or ()))
        except IngestError as err:
            report.failed.append(err)
            continue
        report.warnings.extend(f"{path}: {w}" for w in warnings)
        report.quality[doc_id] = check_quality(doc)
        (report.changed if doc_id in old_hash or doc_id in new_docs else report.added).append(doc_id)
        new_docs.add(doc_id)
        documents[doc_id] = doc
        chunks_by_doc[doc_id] = spool.extend(chunker.chunk(doc))

    sources: dict[str, dict] = dict(previous.sources) if previous is not None else {}
    for folder in beir_paths:  # a BEIR corpus is already cut into passages: one chunk each
        corpus = str((folder / "corpus.jsonl").resolve())
        digest = file_digest(folder / "corpus.jsonl")
        known = previous.sources.get(corpus, {}) if previous is not None else {}
        if same_chunking and not prune and known.get("sha256") == digest:
            report.unchanged_sources[corpus] = int(known.get("documents", 0))
            continue  # the same corpus file: every document in it is unchanged
        whole = DocumentChunker()
        failed, loaded = False, 0
        for item in load_beir_corpus(folder):
            if isinstance(item, IngestError):
                report.failed.append(item)
                failed = True
                continue
            seen.add(item.id)
            loaded += 1
            if unchanged(item.id, item.content_hash):
                report.unchanged.append(item.id)
                continue
            (report.changed if item.id in old_hash or item.id in new_docs else report.added).append(item.id)
            new_docs.add(item.id)
            documents[item.id] = item
            chunks_by_doc[item.id] = spool.extend(whole.chunk(item))
        sources.pop(corpus, None)
        if not failed:  # a corpus with bad lines is read again next time, to report them again
            sources[corpus] = {"sha256": digest, "documents": loaded}

    if previous is not None and not new_docs and (not prune or not _pruned(previous, paths, seen)) \
            and previous.config.to_dict() == config.to_dict() and sources == previous.sources:
        report.nothing_changed = True  # nothing to analyse, fit or write
        return previous, report

    if previous is not None:  # kept documents join the new ones; a new version wins
        if same_chunking:
            keep_chunks(previous.chunks, new_docs, spool, chunks_by_doc)
        for doc in previous.documents.values():
            if doc.id not in new_docs:
                documents[doc.id] = doc

    if prune and previous is not None:
        for doc_id in _pruned(previous, paths, seen):
            del documents[doc_id]
            chunks_by_doc.pop(doc_id, None)
            report.removed.append(doc_id)

    for doc_id in documents:  # documents kept from before, re-chunked if needed
        if doc_id not in chunks_by_doc:
            doc = documents[doc_id]
            chunks_by_doc[doc_id] = spool.extend(
                (DocumentChunker() if doc.format == "beir" else chunker).chunk(doc))

    chunks = spool.view(in_order(documents, chunks_by_doc))  # documents iterate in id order
    del chunks_by_doc
    analyzer = Analyzer(config.analyze.stopwords, config.analyze.stem, config.analyze.identifiers)
    header = config.chunk.context_header

    def text_of(c: Chunk) -> str:  # indexed_text, the spooled document read only for its header
        return indexed_text(documents[c.doc_id], c, True) if header else c.text

    # rows of the previous term counts serve the chunks of unchanged documents: only new and
    # changed documents' chunks are analysed (same chunk id, document and settings: same tokens)
    reuse = previous is not None and same_chunking and previous.config.analyze == config.analyze
    old_rows = previous_rows(previous, chunks, new_docs) if reuse and previous is not None \
        else np.full(len(chunks), -1, dtype=np.int64)
    fresh = np.flatnonzero(old_rows < 0)

    def analysed() -> Iterator[list[str]]:  # one chunk's text and tokens at a time: none are kept
        for n, i in enumerate(fresh.tolist(), 1):
            if progress and n % 500 == 0:
                progress("analyse", n, len(fresh))
            yield analyzer(text_of(chunks[i]))

    counts = TermCounts.build(analysed())
    if previous is not None and fresh.size < len(chunks):
        counts = merge_counts(previous.counts, old_rows, counts)
    lsa = None
    if "lsa" in config.retrieve.retrievers + config.retrieve.observe and chunks:
        if progress:
            progress("lsa", 0, 1)
        lsa = LSA(config.lsa.dim, config.lsa.power_iterations, config.lsa.seed,
                  config.lsa.fit_sample).fit(counts)
    embeddings = {}
    if config.neural.models:
        texts = [text_of(c) for c in chunks]
        for model in config.neural.models:
            embeddings[retriever_name(model)] = embed_chunks(model, config, texts, cache_dir,
                                                             report, progress)
    quality = {**(previous.extra.get("quality", {}) if previous else {}), **report.quality}
    quality = {d: quality[d] for d in documents if d in quality}
    extra = kept_trained_parts(previous, config, report)
    if quality:
        extra["quality"] = quality
    return Index(config, documents, chunks, counts, lsa, extra, embeddings, sources=sources), report


def kept_trained_parts(previous: Index | None, config: Config, report: IngestReport) -> dict:
    """What the new index keeps of the previous one's trained parts (reranker, gate, reader).

    - Nothing changed: all of them.
    - Documents only added (none changed or removed, same chunking and analysis): all of
      them, each marked with the documents added since it was fitted (`added_since`), and
      a warning. The train questions' labelled passages are unchanged; what moves is BM25's
      corpus statistics (idf, mean length), so the scores the reranker and the gate read
      shift slightly and a new document can enter the candidate lists; the figures they were
      fitted with are then approximate, not wrong, and the route says so.
    - A document changed or removed, or other chunking or analysis: none, with a warning
      that names why (a labelled passage may be gone, every chunk id may differ).
    """
    trained = sorted(set(previous.extra) - {"quality"}) if previous is not None else []
    if previous is None or not trained:
        return {}
    kept = {k: v for k, v in previous.extra.items() if k != "quality"}
    same_text = previous.config.chunk == config.chunk and previous.config.analyze == config.analyze
    if same_text and not (report.added or report.changed or report.removed):
        return kept
    if same_text and report.added and not (report.changed or report.removed):
        for part in ("reranker", "gate"):
            if isinstance(kept.get(part), dict):
                kept[part] = {**kept[part], "added_since": sorted({*kept[part].get("added_since", []),
                                                                 *report.added})}
        report.warnings.append(
            f"kept the trained parts ({', '.join(trained)}), fitted before {len(report.added)} document(s) "
            f"were added ({', '.join(report.added[:5])}{' …' if len(report.added) > 5 else ''}): BM25's word "
            "statistics moved, so their scores shift a little; run glassrag rerank-train and glassrag "
            "calibrate again to refit them on this corpus")
        return kept
    why = "the chunking or analysis settings changed" if not same_text else " and ".join(
        f"{what} ({', '.join(ids[:5])}{' …' if len(ids) > 5 else ''})"
        for what, ids in (("documents changed", report.changed), ("documents were removed", report.removed)) if ids)
    report.warnings.append(
        f"the index's trained parts ({', '.join(trained)}) were dropped because {why} (a labelled passage may "
        "have changed or gone): run glassrag rerank-train and glassrag calibrate again")
    return {}


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read in 1 MB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def keep_chunks(chunks: Iterable[Chunk], changed: set[str], spool: ChunkSpool,
                where: dict[str, tuple[int, int]]) -> None:
    """Spool the previous index's chunks of documents not in `changed`; `where` gets each
    document's (first record, count). A stored index keeps a document's chunks together."""
    for c in chunks:
        if c.doc_id in changed:
            continue
        record, _ = spool.extend((c,))
        first, n = where.get(c.doc_id, (record, 0))
        where[c.doc_id] = (first, n + 1)


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
    return TermCounts({terms[j]: k for k, j in enumerate(used.tolist())}, tf, doc_len)


def _pruned(previous: Index, paths: list[Path], seen: set[str]) -> list[str]:
    """Documents of `previous` under `paths` that this ingest did not see (gone from disk)."""
    roots = [p.resolve() for p in paths]
    out = []
    for doc_id, doc in previous.documents.items():
        src = Path(doc.source.rsplit(":", 1)[0] if doc.format == "beir" else doc.source).resolve()
        if doc_id not in seen and any(src == r or r in src.parents for r in roots):
            out.append(doc_id)
    return out


def retriever_name(model: str) -> str:
    """The stage name of a neural retriever: the alias, or the model folder's name."""
    return Path(model).name.lower() if ("/" in model or Path(model).is_dir()) else model.lower()


def with_embedder(config: Config, model: str) -> Config:
    """The settings of an index built with a neural embedder (`ingest --embedder`): it
    answers from BM25 fused with the model by weighted fusion, BM25 weighing
    [fuse] neural_weight."""
    models = list(dict.fromkeys([*config.neural.models, model]))
    return config.updated({"neural": {"models": models},
                           "retrieve": {"retrievers": ["bm25", retriever_name(model)]},
                           "fuse": {"method": "weighted", "weight": config.fuse.neural_weight}},
                          "--embedder", "flag")


def embedder_for(model: str, config: Config) -> "SentenceEmbedder":
    from glassrag.dense.neural import SentenceEmbedder

    n = config.neural
    return SentenceEmbedder(model,
                            None if n.query_instruction == "auto" else n.query_instruction,
                            None if n.passage_instruction == "auto" else n.passage_instruction,
                            n.quantize, n.batch_size, backend=n.backend)


def embed_chunks(model: str, config: Config, texts: list[str], cache_dir: Path | None,
                 report: IngestReport, progress: Progress | None) -> Embedded:
    """Vectors for every chunk text, from the cache where the same model embedded the same
    text before; the report says how many were embedded and how many reused."""
    from glassrag.dense.cache import EmbeddingCache, text_key

    embedder = embedder_for(model, config)
    report.warnings.extend(embedder.warnings())
    cache = EmbeddingCache(cache_dir, embedder.name)
    keys = [text_key(embedder.name, t) for t in texts]
    missing = cache.split(keys)
    if missing:
        def step(done: int, total: int, rate: float) -> None:
            if progress:
                progress(f"embed {rate:.0f}/s", done, total)

        vectors = embedder.embed_passages([texts[i] for i in missing], step)
        cache.put([keys[i] for i in missing], vectors)
        cache.save()
    report.embedded[retriever_name(model)] = {"embedded": len(missing),
                                              "from cache": len(keys) - len(missing)}
    vectors = cache.get(keys) if keys else np.empty((0, 0), dtype=np.float32)
    return Embedded(retriever_name(model), embedder.params(), vectors.astype(np.float32))
