"""Step 2 of an ingest: every document of the new index with its chunks, in index order.

The previous index's documents join those read in step 1 (a new version wins), with their
chunks when chunks are cut the same way; with `prune`, those whose files are gone leave; a
document kept without chunks (other chunk settings) is cut again. The chunks are then read in
document id order, each document's together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Mapping

from glassrag.chunk.base import Chunker
from glassrag.chunk.document import DocumentChunker
from glassrag.chunk.header import indexed_text
from glassrag.config import Config
from glassrag.indexer.diff import Before, Gathered, pruned
from glassrag.ingest.report import IngestReport
from glassrag.schema import Chunk, Document
from glassrag.store.spool import ChunkSpool, SpooledChunks, in_order


def join_kept(before: Before, gathered: Gathered, prune: bool, paths: list[Path], report: IngestReport) -> None:
    """The previous index's documents not read again, and their chunks when they are cut the
    same way; with `prune`, minus those under `paths` whose files are gone."""
    previous = before.previous
    if previous is None:
        return
    if before.same_chunking:
        keep_chunks(previous.chunks, gathered.new, gathered.spool, gathered.where)
    for doc in previous.documents.values():
        if doc.id not in gathered.new:
            gathered.documents[doc.id] = doc
    if prune:
        for doc_id in pruned(previous, paths, gathered.seen):
            del gathered.documents[doc_id]
            gathered.where.pop(doc_id, None)
            report.removed.append(doc_id)


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


def in_index_order(gathered: Gathered, chunker: Chunker) -> SpooledChunks:
    """Every document's chunks, documents in id order (a document kept without chunks is cut
    again: a BEIR passage whole, others by `chunker`). The spans are then the table's, so
    `gathered.where` is emptied."""
    documents = gathered.documents
    for doc_id in documents:
        if doc_id not in gathered.where:
            doc = documents[doc_id]
            gathered.where[doc_id] = gathered.spool.extend(
                (DocumentChunker() if doc.format == "beir" else chunker).chunk(doc))
    chunks = gathered.spool.view(in_order(documents, gathered.where))  # documents iterate in id order
    gathered.where.clear()
    return chunks


def indexed(documents: Mapping[str, Document], config: Config) -> Callable[[Chunk], str]:
    """The text a chunk is indexed by: with chunk.context_header, its document's title and
    headings first (the spooled document is read only for them), else the chunk's text."""
    if not config.chunk.context_header:
        return lambda c: c.text
    return lambda c: indexed_text(documents[c.doc_id], c, True)
