"""Chunks and documents read on demand from an index folder, by offset.

An index of a million chunks must open in about a second, so nothing here parses the
tables at open: `FolderChunks[i]` reads line i of chunks.jsonl (its byte offset is in
chunk_offsets.npy) and cuts its text out of texts.bin; `DocumentTable[id]` finds the id
by binary search in the sorted doc_ids.npy. Both are plain `Sequence`/`Mapping`s, so code
written for a list of chunks and a dict of documents works on them unchanged; whole-table
passes (`iter`, `values()`, `items()`) stream the files in order instead of seeking.

The text of every document is stored once, in texts.bin (UTF-8, documents in id order);
a chunk is a verbatim span of its document (`chunk.text == doc.text[start:end]`), so its
text is a byte range of the same file (chunk_text.npy).
"""

from __future__ import annotations

import json
import mmap
from collections.abc import ItemsView, Iterator, Mapping, Sequence, ValuesView
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.errors import StoreError
from glassrag.ingest.versions import superseded
from glassrag.schema import Chunk, Document
from glassrag.store.base import ChunkRows, parse_date
from glassrag.store.shapes import BYTES, INTEGER, array, load_array  # noqa: F401 - load_array is imported from here too

# RecursionError: a row nested thousands deep (json.loads recurses per level)
DAMAGE = (ValueError, KeyError, TypeError, AttributeError, IndexError, UnicodeDecodeError, RecursionError)
# parsed chunks kept per table (a Chunk is frozen, so they are shared safely): a question reads
# about 110 chunks (the rerankers, the excerpts, the reader), many of them the same from one
# question to the next; parsing their rows again was a tenth of a demo ask (issue 30). About
# 2 KB each: 8 MB at most.
CHUNKS_KEPT = 4096
# ids whose row is kept per lookup table: a question looks up about 200 (the gate's signals, the
# budget, the rerankers), each a binary search over memory-mapped ids
IDS_KEPT = 65_536


def damaged(folder: Path, err: Exception) -> StoreError:
    return StoreError(f"{folder}: index files damaged ({type(err).__name__}: {err})",
                      "rebuild the index with glassrag ingest")


def check_size(path: Path, expected: int) -> None:
    """A table file must end where its offsets say: a cheap check, at open, that it was
    neither cut short nor edited."""
    size = path.stat().st_size
    if size != expected:
        raise StoreError(f"{path}: index files damaged ({size} bytes where the offsets say {expected})",
                         "rebuild the index with glassrag ingest")


class Bytes:
    """A file's bytes, memory-mapped (an empty file reads as b"")."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("rb") as f:
            size = path.stat().st_size
            self._data: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""

    def __getitem__(self, span: slice) -> bytes:
        return self._data[span]


class IdLookup(Mapping[str, int]):
    """id -> row, by binary search in a sorted bytes array (`order[k]` is the row of the
    k-th smallest id)."""

    def __init__(self, sorted_ids: np.ndarray, order: np.ndarray) -> None:
        self.sorted_ids, self.order = sorted_ids, order
        self._row = lru_cache(maxsize=IDS_KEPT)(self._search)

    def _find(self, key: object) -> int:
        return self._row(key) if isinstance(key, str) else -1

    def _search(self, key: str) -> int:
        b = key.encode("utf-8")
        if self.sorted_ids.dtype.itemsize < len(b):
            return -1
        k = int(np.searchsorted(self.sorted_ids, b))
        if k < len(self.sorted_ids) and self.sorted_ids[k] == b:
            return int(self.order[k])
        return -1

    def __getitem__(self, key: str) -> int:
        row = self._find(key)
        if row < 0:
            raise KeyError(key)
        return row

    def __contains__(self, key: object) -> bool:
        return self._find(key) >= 0

    def __iter__(self) -> Iterator[str]:
        return (b.decode("utf-8") for b in self.sorted_ids)

    def __len__(self) -> int:
        return len(self.sorted_ids)


class StreamedDocuments(Mapping[str, Document]):
    """What both stores' document tables share: `values()` and `items()` stream the
    documents in one pass (`_stream`) instead of a lookup per id."""

    def _stream(self) -> Iterator[Document]:
        raise NotImplementedError

    def values(self) -> ValuesView[Document]:
        return _StreamedValues(self)

    def items(self) -> ItemsView[str, Document]:
        return _StreamedItems(self)


class FolderChunks(ChunkRows):
    """The chunks of a stored index, in index order, each parsed when asked for: a ChunkTable
    (store/base.py) whose ids, positions and words are memory-mapped arrays."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._rows = Bytes(folder / "chunks.jsonl")
        self._texts = Bytes(folder / "texts.bin")
        self.ids = array(folder / "chunk_ids.npy", BYTES, (None,))  # bytes, index order
        n = len(self.ids)
        self.offsets = array(folder / "chunk_offsets.npy", INTEGER, (n + 1,))  # n + 1 line starts
        self.text_spans = array(folder / "chunk_text.npy", INTEGER, (n, 2))  # byte ranges in texts.bin
        self.words = array(folder / "chunk_words.npy", INTEGER, (n,))  # whitespace-separated words per chunk
        self.positions = IdLookup(array(folder / "chunk_ids_sorted.npy", BYTES, (n,)),
                                  array(folder / "chunk_ids_order.npy", INTEGER, (n,)))
        check_size(folder / "chunks.jsonl", int(self.offsets[-1]))
        self._at = lru_cache(maxsize=CHUNKS_KEPT)(self._read)  # type: ignore[method-assign]

    def __len__(self) -> int:
        return len(self.ids)

    def _read(self, i: int) -> Chunk:
        return self._chunk(i, self._rows[int(self.offsets[i]):int(self.offsets[i + 1])])

    def _chunk(self, i: int, line: bytes) -> Chunk:
        try:
            row = json.loads(line)
            if "text" not in row:
                a, b = self.text_spans[i]
                row["text"] = self._texts[int(a):int(b)].decode("utf-8")
            return Chunk.from_dict(row)
        except DAMAGE as err:
            raise damaged(self.folder, err) from None

    def __iter__(self) -> Iterator[Chunk]:
        start = int(self.offsets[0]) if len(self.offsets) else 0
        end = int(self.offsets[-1]) if len(self.offsets) else 0
        for i, line in enumerate(self._rows[start:end].splitlines()):
            yield self._chunk(i, line)


class DocumentTable(StreamedDocuments):
    """The documents of a stored index by id (sorted), each parsed when asked for."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._rows = Bytes(folder / "documents.jsonl")
        self._texts = Bytes(folder / "texts.bin")
        self.sorted_ids = array(folder / "doc_ids.npy", BYTES, (None,))  # bytes, sorted: row order
        n = len(self.sorted_ids)
        self.offsets = array(folder / "doc_offsets.npy", INTEGER, (n + 1,))  # n + 1 line starts
        self.text_offsets = array(folder / "doc_text.npy", INTEGER, (n + 1,))  # byte offsets in texts.bin
        self.rows = IdLookup(self.sorted_ids, np.arange(len(self.sorted_ids)))
        check_size(folder / "documents.jsonl", int(self.offsets[-1]))
        check_size(folder / "texts.bin", int(self.text_offsets[-1]))

    def __len__(self) -> int:
        return len(self.sorted_ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.rows)

    def __contains__(self, key: object) -> bool:
        return key in self.rows

    def __getitem__(self, doc_id: str) -> Document:
        r = self.rows[doc_id]
        return self.at(r)

    def at(self, r: int) -> Document:
        return self._document(r, self._rows[int(self.offsets[r]):int(self.offsets[r + 1])])

    def _document(self, r: int, line: bytes) -> Document:
        try:
            row = json.loads(line)
            row["text"] = self._texts[int(self.text_offsets[r]):int(self.text_offsets[r + 1])].decode("utf-8")
            return Document.from_dict(row)
        except DAMAGE as err:
            raise damaged(self.folder, err) from None

    def _stream(self) -> Iterator[Document]:
        start = int(self.offsets[0]) if len(self.offsets) else 0
        end = int(self.offsets[-1]) if len(self.offsets) else 0
        for r, line in enumerate(self._rows[start:end].splitlines()):
            yield self._document(r, line)

    def content_hashes(self) -> Mapping[str, str]:
        return _Column(self, array(self.folder / "doc_hashes.npy", BYTES, (len(self),)))


class _Column(Mapping[str, str]):
    """document id -> one stored per-document bytes column (content hashes)."""

    def __init__(self, documents: DocumentTable, column: np.ndarray) -> None:
        self.documents, self.column = documents, column

    def to_dict(self) -> dict[str, str]:
        """The whole column at once (a re-ingest compares every document)."""
        return dict(zip((b.decode("utf-8") for b in self.documents.sorted_ids.tolist()),
                        (b.decode("utf-8") for b in self.column.tolist())))

    def __getitem__(self, doc_id: str) -> str:
        return bytes(self.column[self.documents.rows[doc_id]]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.documents)

    def __len__(self) -> int:
        return len(self.documents)


class _StreamedValues(ValuesView[Document]):
    def __iter__(self) -> Iterator[Document]:
        return self._mapping._stream()  # type: ignore[attr-defined, no-any-return]


class _StreamedItems(ItemsView[str, Document]):
    def __iter__(self) -> Iterator[tuple[str, Document]]:
        return ((d.id, d) for d in self._mapping._stream())  # type: ignore[attr-defined]


def byte_offsets(text: str, positions: list[int]) -> dict[int, int] | None:
    """Character position -> UTF-8 byte offset in `text`, for the given positions, in one
    pass (a chunked document of many megabytes is encoded once, not once per chunk);
    None for ASCII text, where the two are the same."""
    if text.isascii():
        return None
    out: dict[int, int] = {}
    last, acc = 0, 0
    for p in sorted(set(positions)):
        acc += len(text[last:p].encode("utf-8"))
        out[p] = acc
        last = p
    return out


def sorted_ids(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(ids as a sorted bytes array, the row of each) for IdLookup."""
    raw = np.array([i.encode("utf-8") for i in ids], dtype=bytes) if ids else np.empty(0, dtype="S1")
    order = np.argsort(raw, kind="stable").astype(np.int64)
    return raw[order], order


def _is_span(documents: Mapping[str, Document], c: Chunk) -> bool:
    """chunk.text == doc.text[start:end]; a stored table's chunks were checked when it was
    written (a spool keeps the document last read, so checking its chunks reads it once)."""
    if isinstance(documents, DocumentTable):
        return True
    return documents[c.doc_id].text[c.start:c.end] == c.text


def document_row(doc: Document) -> dict[str, Any]:
    """A document's line of documents.jsonl: everything but its text (in texts.bin)."""
    return {"id": doc.id, "title": doc.title, "source": doc.source, "format": doc.format,
            "sections": [s.to_dict() for s in doc.sections], "metadata": dict(doc.metadata),
            "content_hash": doc.content_hash}


def chunk_row(c: Chunk) -> dict[str, Any]:
    """A chunk's line of chunks.jsonl: everything but its text, kept only where the chunk is
    not a span of its document."""
    return {"id": c.id, "doc_id": c.doc_id, "locator": c.locator, "start": c.start, "end": c.end,
            "position": c.position, "heading_path": list(c.heading_path)}


def write_tables(folder: Path, documents: Mapping[str, Document],
                 chunks: Sequence[Chunk]) -> dict[str, Any]:
    """Write texts.bin, documents.jsonl, chunks.jsonl and their offset and id arrays;
    return the corpus-wide facts the manifest keeps (superseded documents, newest date)."""
    spans: dict[str, list[int]] = {}
    doc_chunks: dict[str, int] = {}
    for c in chunks:
        spans.setdefault(c.doc_id, []).extend((c.start, c.end))
        doc_chunks[c.doc_id] = doc_chunks.get(c.doc_id, 0) + 1
    ids = sorted(documents)
    doc_offsets = np.zeros(len(ids) + 1, dtype=np.int64)
    doc_text = np.zeros(len(ids) + 1, dtype=np.int64)
    where: dict[str, tuple[int, dict[int, int] | None]] = {}  # doc id -> (text offset, char→byte)
    newest: Any = None
    hashes: list[bytes] = []
    linked: list[Document] = []  # documents that name another version (ingest/versions.py)
    with (folder / "texts.bin").open("wb") as texts, (folder / "documents.jsonl").open("wb") as rows:
        for r, doc_id in enumerate(ids):
            doc = documents[doc_id]
            data = doc.text.encode("utf-8")
            if doc_id in spans:
                where[doc_id] = (int(doc_text[r]), byte_offsets(doc.text, spans[doc_id]))
            texts.write(data)
            doc_text[r + 1] = doc_text[r] + len(data)
            line = (json.dumps(document_row(doc), ensure_ascii=False) + "\n").encode("utf-8")
            rows.write(line)
            doc_offsets[r + 1] = doc_offsets[r] + len(line)
            hashes.append(doc.content_hash.encode("utf-8"))
            if doc.metadata.get("superseded_by") or doc.metadata.get("supersedes"):
                linked.append(doc)
            date = parse_date(doc.metadata.get("date")) if doc.metadata.get("date") else None
            if date and (newest is None or date > newest):
                newest = date
    np.save(folder / "doc_offsets.npy", doc_offsets)
    np.save(folder / "doc_text.npy", doc_text)
    np.save(folder / "doc_ids.npy", sorted_ids(ids)[0])
    np.save(folder / "doc_hashes.npy", np.array(hashes, dtype=bytes) if ids else np.empty(0, dtype="S1"))
    np.save(folder / "doc_chunks.npy", np.array([doc_chunks.get(i, 0) for i in ids], dtype=np.int32))
    n = len(chunks)
    offsets = np.zeros(n + 1, dtype=np.int64)
    text_spans = np.zeros((n, 2), dtype=np.int64)
    chunk_ids: list[str] = []
    words = np.zeros(n, dtype=np.int32)
    with (folder / "chunks.jsonl").open("wb") as rows:
        for i, c in enumerate(chunks):
            row = chunk_row(c)
            base, to_byte = where.get(c.doc_id, (-1, None))
            if base >= 0 and _is_span(documents, c):
                a, b = (c.start, c.end) if to_byte is None else (to_byte[c.start], to_byte[c.end])
                text_spans[i] = (base + a, base + b)
            else:  # not a span of an indexed document: the chunk keeps its own text
                row["text"] = c.text
            line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
            rows.write(line)
            offsets[i + 1] = offsets[i] + len(line)
            chunk_ids.append(c.id)
            words[i] = len(c.text.split())
    np.save(folder / "chunk_offsets.npy", offsets)
    np.save(folder / "chunk_text.npy", text_spans)
    np.save(folder / "chunk_words.npy", words)
    raw = np.array([i.encode("utf-8") for i in chunk_ids], dtype=bytes) if chunk_ids \
        else np.empty(0, dtype="S1")
    np.save(folder / "chunk_ids.npy", raw)
    order = np.argsort(raw, kind="stable").astype(np.int64)
    np.save(folder / "chunk_ids_sorted.npy", raw[order])
    np.save(folder / "chunk_ids_order.npy", order)
    return {"superseded": superseded(documents, linked), "newest_date": newest.isoformat() if newest else None}
