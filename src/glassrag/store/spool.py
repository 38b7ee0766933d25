"""Documents and chunks spooled to disk while ingest produces them, read back by offset.

Held as Python objects until the index is written, a million one-chunk SciFact documents
took about 3.4 GB of ingest's 5.2 GB peak (bench/scaling.py at 1M; sampled VmRSS at 250k:
850 MB after reading, before any term was counted), more than bm25s needs for its whole
build. So `build_index` writes each document and chunk, as JSON, to an unlinked temporary
file the moment it has them and keeps only a byte offset and a size for each (the ids of
documents, to look them up); `DocumentSpool` and `ChunkSpool.view` read them back, one at a
time, as the `Mapping` and `Sequence` an `Index` holds. Reads go through `os.pread`, not a
memory map, so what was read does not stay in this process's resident memory.

The files are created unlinked (`tempfile.TemporaryFile`), in the index folder when ingest
writes to one: a crash leaves nothing behind, and the old index is not touched.
"""

from __future__ import annotations

import json
import os
import tempfile
from array import array
from collections.abc import Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.schema import Chunk, Document
from glassrag.store.base import ChunkRows
from glassrag.store.tables import chunk_row, document_row


class Spool:
    """Append-only records in an unlinked temporary file: `add` returns a record's number,
    `get` reads it back."""

    def __init__(self, folder: Path | None = None) -> None:
        self._file = tempfile.TemporaryFile(dir=folder, prefix=".tmp-gen-spool-")
        self._starts = array("q")
        self._sizes = array("q")
        self._end = 0
        self._unflushed = False

    def add(self, data: bytes) -> int:
        self._file.write(data)
        self._starts.append(self._end)
        self._sizes.append(len(data))
        self._end += len(data)
        self._unflushed = True
        return len(self._starts) - 1

    def get(self, record: int) -> bytes:
        if self._unflushed:
            self._file.flush()
            self._unflushed = False
        return os.pread(self._file.fileno(), self._sizes[record], self._starts[record])

    def __len__(self) -> int:
        return len(self._starts)


def _encode(row: dict[str, Any], text: str) -> bytes:
    """A record: the row's JSON length (4 bytes), the row as JSON, the text as UTF-8 (the text
    is most of the bytes, and kept out of the JSON it is neither escaped nor unescaped)."""
    head = json.dumps(row, ensure_ascii=False).encode("utf-8")
    return len(head).to_bytes(4, "little") + head + text.encode("utf-8")


def _decode(record: bytes) -> dict[str, Any]:
    n = int.from_bytes(record[:4], "little")
    row = json.loads(record[4:4 + n].decode("utf-8"))  # a str: json.loads skips guessing the encoding
    row["text"] = record[4 + n:].decode("utf-8")
    return row  # type: ignore[no-any-return]


class DocumentSpool(MutableMapping[str, Document]):
    """Documents by id, each written to the spool when set and parsed when asked for; the
    last one read is kept (a document's chunks are read one after another). Iterates in
    sorted id order, the order an index stores its documents in."""

    def __init__(self, folder: Path | None = None) -> None:
        self._spool = Spool(folder)
        self._records: dict[str, int] = {}
        self._sorted: list[str] | None = None
        self._last: Document | None = None

    def __setitem__(self, doc_id: str, doc: Document) -> None:
        self._records[doc_id] = self._spool.add(_encode(document_row(doc), doc.text))
        self._sorted = None
        self._last = None

    def __getitem__(self, doc_id: str) -> Document:
        last = self._last
        if last is not None and last.id == doc_id:
            return last
        doc = Document.from_dict(_decode(self._spool.get(self._records[doc_id])))
        self._last = doc
        return doc

    def __delitem__(self, doc_id: str) -> None:
        del self._records[doc_id]
        self._sorted = None
        self._last = None

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __iter__(self) -> Iterator[str]:
        if self._sorted is None:
            self._sorted = sorted(self._records)
        return iter(self._sorted)

    def __len__(self) -> int:
        return len(self._records)


class ChunkSpool:
    """Chunks written one after another; `extend` returns where a document's chunks are
    (first record, how many), `view` the chunks in a given record order."""

    def __init__(self, folder: Path | None = None) -> None:
        self._spool = Spool(folder)

    def extend(self, chunks: Iterable[Chunk]) -> tuple[int, int]:
        first = len(self._spool)
        for c in chunks:
            self._spool.add(_encode(chunk_row(c), c.text))
        return first, len(self._spool) - first

    def get(self, record: int) -> Chunk:
        return Chunk.from_dict(_decode(self._spool.get(record)))

    def view(self, records: np.ndarray) -> "SpooledChunks":
        return SpooledChunks(self, records)


def in_order(ids: Iterable[str], where: dict[str, tuple[int, int]]) -> np.ndarray:
    """The records of the chunks of documents `ids`, document after document: `where` maps
    a document to (first record, count) as `ChunkSpool.extend` returned them."""
    spans = [where[d] for d in ids]
    first = np.fromiter((s[0] for s in spans), dtype=np.int64, count=len(spans))
    count = np.fromiter((s[1] for s in spans), dtype=np.int64, count=len(spans))
    starts = np.cumsum(count) - count  # where each document's chunks begin in the result
    total = int(count.sum())
    return np.repeat(first - starts, count) + np.arange(total, dtype=np.int64)


class SpooledChunks(ChunkRows):
    """The chunks of an index being built, in index order: row i is spool record
    `records[i]`, parsed when asked for."""

    def __init__(self, spool: ChunkSpool, records: np.ndarray) -> None:
        self._chunks = spool
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def _at(self, i: int) -> Chunk:
        return self._chunks.get(int(self.records[i]))

    def __iter__(self) -> Iterator[Chunk]:
        return (self._chunks.get(r) for r in self.records.tolist())
