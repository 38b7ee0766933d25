"""Building an index: walk, load, chunk, analyse, count terms, fit LSA, in that order.

Unchanged files (same path-derived id and content hash, same chunk settings) keep the
chunks they had; only new and changed files are parsed and chunked again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from glassrag.chunk import make_chunker
from glassrag.chunk.document import DocumentChunker
from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.errors import IngestError
from glassrag.ingest import document_ids, file_hash, load_document, read_bytes, walk
from glassrag.ingest.beir import is_beir, load_beir_corpus
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import TermCounts
from glassrag.schema import Chunk, Document
from glassrag.store.base import Index


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


Progress = Callable[[str, int, int], None]


def indexed_text(doc: Document, chunk: Chunk, header: bool) -> str:
    """The text BM25 and LSA see for a chunk: with `header`, the document title and the
    heading path go in front, unless the chunk already starts with them."""
    if not header:
        return chunk.text
    parts = [doc.title, *chunk.heading_path]
    head = [p for p in dict.fromkeys(parts) if p and not chunk.text.startswith(p)]
    return "\n".join([*head, chunk.text])


def build_index(paths: list[Path], config: Config, previous: Index | None = None,
                prune: bool = False, max_bytes: int | None = None,
                progress: Progress | None = None) -> tuple[Index, IngestReport]:
    """Ingest `paths` into a new Index, reusing what `previous` already holds."""
    report = IngestReport()
    beir_paths = [p for p in paths if is_beir(p)]
    found = walk([p for p in paths if p not in beir_paths])
    report.failed.extend(found.problems)
    report.skipped.extend(found.skipped)
    chunker = make_chunker(config.chunk.chunker, size=config.chunk.size,
                           overlap=config.chunk.overlap, unit=config.chunk.unit)
    same_chunking = previous is not None and previous.config.chunk == config.chunk

    documents: dict[str, Document] = dict(previous.documents) if previous else {}
    old_chunks: dict[str, list[Chunk]] = {}
    if previous is not None:
        for c in previous.chunks:
            old_chunks.setdefault(c.doc_id, []).append(c)
    chunks_by_doc: dict[str, list[Chunk]] = dict(old_chunks) if same_chunking else {}

    ids = document_ids(found.files)
    seen: set[str] = set()
    for n, ((path, _root), doc_id) in enumerate(zip(found.files, ids), 1):
        if progress:
            progress("read", n, len(found.files))
        seen.add(doc_id)
        try:
            data = read_bytes(path, max_bytes) if max_bytes else read_bytes(path)
            old = documents.get(doc_id)
            if old is not None and old.content_hash == file_hash(data) and doc_id in chunks_by_doc:
                report.unchanged.append(doc_id)
                continue
            doc, warnings = load_document(path, doc_id, data)
        except IngestError as err:
            report.failed.append(err)
            continue
        report.warnings.extend(f"{path}: {w}" for w in warnings)
        (report.changed if doc_id in documents else report.added).append(doc_id)
        documents[doc_id] = doc
        chunks_by_doc[doc_id] = chunker.chunk(doc)

    for folder in beir_paths:  # a BEIR corpus is already cut into passages: one chunk each
        whole = DocumentChunker()
        for item in load_beir_corpus(folder):
            if isinstance(item, IngestError):
                report.failed.append(item)
                continue
            seen.add(item.id)
            old = documents.get(item.id)
            if old is not None and old.content_hash == item.content_hash and item.id in chunks_by_doc:
                report.unchanged.append(item.id)
                continue
            (report.changed if item.id in documents else report.added).append(item.id)
            documents[item.id] = item
            chunks_by_doc[item.id] = whole.chunk(item)

    if prune and previous is not None:
        roots = [p.resolve() for p in paths]
        for doc_id, doc in list(documents.items()):
            src = Path(doc.source.rsplit(":", 1)[0] if doc.format == "beir" else doc.source).resolve()
            if doc_id not in seen and any(src == r or r in src.parents for r in roots):
                del documents[doc_id]
                chunks_by_doc.pop(doc_id, None)
                report.removed.append(doc_id)

    for doc_id, doc in documents.items():  # documents kept from before, re-chunked if needed
        if doc_id not in chunks_by_doc:
            chunks_by_doc[doc_id] = (DocumentChunker() if doc.format == "beir" else chunker).chunk(doc)

    chunks = [c for doc_id in sorted(documents) for c in chunks_by_doc[doc_id]]
    analyzer = Analyzer(config.analyze.stopwords, config.analyze.stem, config.analyze.identifiers)
    tokens = []
    for n, c in enumerate(chunks, 1):
        if progress and n % 500 == 0:
            progress("analyse", n, len(chunks))
        tokens.append(analyzer(indexed_text(documents[c.doc_id], c, config.chunk.context_header)))
    counts = TermCounts.build(tokens)
    lsa = None
    if "lsa" in config.retrieve.retrievers + config.retrieve.observe and chunks:
        if progress:
            progress("lsa", 0, 1)
        lsa = LSA(config.lsa.dim, config.lsa.power_iterations, config.lsa.seed).fit(counts)
    documents = {k: documents[k] for k in sorted(documents)}
    extra: dict = {}
    if previous is not None and previous.extra:
        unchanged = not (report.added or report.changed or report.removed) and \
            previous.config.chunk == config.chunk and previous.config.analyze == config.analyze
        if unchanged:
            extra = dict(previous.extra)
        else:
            report.warnings.append(
                f"the index changed, so its trained parts ({', '.join(sorted(previous.extra))}) were "
                "dropped: run glassrag rerank-train and glassrag calibrate again")
    return Index(config, documents, chunks, counts, lsa, extra), report
