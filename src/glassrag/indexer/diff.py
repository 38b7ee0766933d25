"""Step 1 of an ingest: which files are new, changed, unchanged or gone since the previous
index, and the documents of the new and changed ones, read and chunked as they are found.

What changed is decided from the stored content hashes alone (a stored index keeps them in an
array); the previous index's documents and chunks are read only when something did change
(step 2, indexer/chunks.py). Documents and chunks go to a spool on disk as they are read
(glassrag/store/spool.py): what stays in memory is their ids and offsets.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from glassrag.chunk.base import Chunker
from glassrag.chunk.document import DocumentChunker
from glassrag.config import Config
from glassrag.errors import IngestError
from glassrag.ingest import document_ids, file_hash, load_document, read_bytes
from glassrag.ingest.beir import load_beir_corpus
from glassrag.ingest.quality import check as check_quality
from glassrag.ingest.report import IngestReport, Progress
from glassrag.schema import Chunk, Document
from glassrag.store.base import Index
from glassrag.store.spool import ChunkSpool, DocumentSpool


@dataclass
class Before:
    """What the previous index says of each document: its content hash and whether it gave
    no chunk; and whether chunks are cut the same way now (if not, every document is read
    again)."""

    previous: Index | None = None
    hashes: dict[str, str] = field(default_factory=dict)
    chunkless: set[str] = field(default_factory=set)
    same_chunking: bool = False

    @classmethod
    def of(cls, previous: Index | None, config: Config) -> "Before":
        if previous is None:
            return cls()
        hashes = previous.content_hashes()
        old_hash = hashes.to_dict() if hasattr(hashes, "to_dict") else dict(hashes)
        chunkless = {d for d in old_hash if previous.chunks_in(d) == 0} if not previous.stored \
            else set(previous.stored.chunkless)
        return cls(previous, old_hash, chunkless, previous.config.chunk == config.chunk)

    def unchanged(self, doc_id: str, content_hash: str) -> bool:
        """Whether the previous index holds this document as it is, with its chunks."""
        return self.same_chunking and self.hashes.get(doc_id) == content_hash and doc_id not in self.chunkless


class Gathered:
    """The documents and chunks of an ingest so far, spooled: the new and changed ones first,
    then those kept (step 2). `where`: each document's (first spooled chunk, count); `new`:
    the documents read in this ingest; `seen`: every document found, read or not."""

    def __init__(self, spool_dir: Path | None = None) -> None:
        self.documents = DocumentSpool(spool_dir)
        self.spool = ChunkSpool(spool_dir)
        self.where: dict[str, tuple[int, int]] = {}
        self.new: set[str] = set()
        self.seen: set[str] = set()

    def add(self, doc: Document, chunks: Iterable[Chunk], before: Before, report: IngestReport) -> None:
        """A new or changed document and its chunks (a document read twice: changed)."""
        (report.changed if doc.id in before.hashes or doc.id in self.new else report.added).append(doc.id)
        self.new.add(doc.id)
        self.documents[doc.id] = doc
        self.where[doc.id] = self.spool.extend(chunks)


@dataclass(frozen=True)
class Read:
    """What reading one file gave: nothing (unchanged since the previous index), a failure
    (path, reason, hint: an IngestError's fields, so it crosses a process as plain data), or the
    document with its chunks, the loader's warnings and its quality check."""

    doc: Document | None = None
    chunks: tuple[Chunk, ...] = ()
    warnings: tuple[str, ...] = ()
    quality: dict | None = None
    failed: tuple[str, str, str] | None = None


def read_file(path: Path, doc_id: str, chunker: Chunker, before: Before, max_bytes: int | None,
              max_text: tuple[float, float] | None) -> Read:
    """One walked file hashed; when new or changed, loaded, checked and chunked. Needs of
    `before` only its hashes, chunkless documents and `same_chunking` (a cluster's worker gets
    a Before without the previous index)."""
    try:
        data = read_bytes(path, max_bytes) if max_bytes else read_bytes(path)
        if before.unchanged(doc_id, file_hash(data)):
            return Read()
        doc, warnings = load_document(path, doc_id, data, *(max_text or ()))
    except IngestError as err:
        return Read(failed=(err.path, err.reason, err.hint))
    return Read(doc, tuple(chunker.chunk(doc)), tuple(warnings), check_quality(doc))


def record(read: Read, path: Path, doc_id: str, before: Before, gathered: Gathered, report: IngestReport) -> None:
    """What `read_file` gave, added to the ingest: the report's lists and the spooled chunks."""
    gathered.seen.add(doc_id)
    if read.failed is not None:
        report.failed.append(IngestError(*read.failed))
    elif read.doc is None:
        report.unchanged.append(doc_id)
    else:
        report.warnings.extend(f"{path}: {w}" for w in read.warnings)
        report.quality[doc_id] = read.quality or {}
        gathered.add(read.doc, read.chunks, before, report)


def read_files(files: list[tuple[Path, Path]], chunker: Chunker, before: Before, gathered: Gathered,
               report: IngestReport, max_bytes: int | None, max_text: tuple[float, float] | None,
               progress: Progress | None) -> None:
    """Every walked file, hashed; the new and changed ones loaded, checked and chunked. A
    file that cannot be read is a failure in the report, not a crash."""
    for n, ((path, _root), doc_id) in enumerate(zip(files, document_ids(files)), 1):
        if progress:
            progress("read", n, len(files))
        record(read_file(path, doc_id, chunker, before, max_bytes, max_text), path, doc_id, before, gathered, report)


def read_corpora(folders: list[Path], before: Before, prune: bool, gathered: Gathered,
                 report: IngestReport) -> dict[str, dict]:
    """The documents of each BEIR corpus folder, already cut into passages (one chunk each);
    a corpus file with the same digest as before is not read. Returns the index's `sources`
    (corpus file -> sha256, documents)."""
    previous = before.previous
    sources: dict[str, dict] = dict(previous.sources) if previous is not None else {}
    for folder in folders:
        corpus = str((folder / "corpus.jsonl").resolve())
        digest = file_digest(folder / "corpus.jsonl")
        known = previous.sources.get(corpus, {}) if previous is not None else {}
        if before.same_chunking and not prune and known.get("sha256") == digest:
            report.unchanged_sources[corpus] = int(known.get("documents", 0))
            continue  # the same corpus file: every document in it is unchanged
        whole = DocumentChunker()
        failed, loaded = False, 0
        for item in load_beir_corpus(folder):
            if isinstance(item, IngestError):
                report.failed.append(item)
                failed = True
                continue
            gathered.seen.add(item.id)
            loaded += 1
            if before.unchanged(item.id, item.content_hash):
                report.unchanged.append(item.id)
                continue
            gathered.add(item, whole.chunk(item), before, report)
        sources.pop(corpus, None)
        if not failed:  # a corpus with bad lines is read again next time, to report them again
            sources[corpus] = {"sha256": digest, "documents": loaded}
    return sources


def nothing_changed(before: Before, config: Config, gathered: Gathered, sources: dict[str, dict],
                    prune: bool, paths: list[Path]) -> bool:
    """Whether the previous index is the index asked for as it is: no document read, none
    pruned, the same settings and corpus files."""
    previous = before.previous
    return previous is not None and not gathered.new \
        and (not prune or not pruned(previous, paths, gathered.seen)) \
        and previous.config.to_dict() == config.to_dict() and sources == previous.sources


def pruned(previous: Index, paths: list[Path], seen: set[str]) -> list[str]:
    """Documents of `previous` under `paths` that this ingest did not see (gone from disk)."""
    roots = [p.resolve() for p in paths]
    out = []
    for doc_id, doc in previous.documents.items():
        src = Path(doc.source.rsplit(":", 1)[0] if doc.format == "beir" else doc.source).resolve()
        if doc_id not in seen and any(src == r or r in src.parents for r in roots):
            out.append(doc_id)
    return out


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read in 1 MB blocks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
