"""Chunks and documents of a PostgreSQL index, read on demand (the twins of store/tables.py).

At open only each chunk's key, id, document and word count are read (in index order:
document id in byte order, then position, as ingest orders them); a chunk's or a
document's text is one SELECT when asked for; whole-table passes stream a server-side cursor.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from glassrag.schema import Chunk, Document, Section
from glassrag.store.pgschema import Location
from glassrag.store.base import ChunkRows
from glassrag.store.tables import StreamedDocuments

ORDER = 'doc_id COLLATE "C", position'
CHUNK_COLUMNS = 'id, doc_id, locator, text, start, "end", position, heading_path'
DOC_COLUMNS = "id, title, source, format, sections, metadata, content_hash, text"


def chunk_of(row: tuple) -> Chunk:
    cid, doc_id, locator, text, start, end, position, heading = row
    return Chunk(cid, doc_id, locator, text, start, end, position, tuple(heading))


def document_of(row: tuple) -> Document:
    did, title, source, fmt, sections, metadata, content_hash, text = row
    return Document(did, title, source, fmt, text, tuple(Section.from_dict(s) for s in sections),
                    metadata, content_hash)


def streamed(conn: Any, name: str, sql: str, batch: int) -> Iterator[tuple]:
    """The rows of `sql` through a server-side cursor `name`, `batch` rows a round trip (a
    whole-table pass never holds the table in memory)."""
    with conn.transaction(), conn.cursor(name=name) as cur:
        cur.itersize = batch
        cur.execute(sql)
        yield from cur


class PgChunks(ChunkRows):
    """The chunks of a PostgreSQL index, in index order. `pg` is the store that read them
    (the pg-* retrievers search through it)."""

    def __init__(self, pg: Any, conn: Any, loc: Location) -> None:
        self.pg, self.conn, self.loc = pg, conn, loc
        rows = conn.execute(f"SELECT key, id, doc_id, words FROM {loc.table('chunks')} ORDER BY {ORDER}").fetchall()
        self.keys = np.array([r[0] for r in rows], dtype=np.int64)
        ids = [r[1] for r in rows]
        self.ids = np.array([i.encode("utf-8") for i in ids], dtype=bytes) if ids else np.empty(0, dtype="S1")
        self.doc_ids = [r[2] for r in rows]
        self.words = np.array([r[3] for r in rows], dtype=np.int32)
        self.positions = {cid: i for i, cid in enumerate(ids)}
        self._row_of_key: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self.keys)

    def _at(self, i: int) -> Chunk:
        row = self.conn.execute(f"SELECT {CHUNK_COLUMNS} FROM {self.loc.table('chunks')} WHERE key = %s",
                                (int(self.keys[i]),)).fetchone()
        return chunk_of(row)

    def __iter__(self) -> Iterator[Chunk]:
        sql = f"SELECT {CHUNK_COLUMNS} FROM {self.loc.table('chunks')} ORDER BY {ORDER}"
        return map(chunk_of, streamed(self.conn, "glassrag_chunks", sql, 5000))

    def row_of_key(self) -> dict[int, int]:
        """chunk key -> its row in index order."""
        if self._row_of_key is None:
            self._row_of_key = {int(k): i for i, k in enumerate(self.keys.tolist())}
        return self._row_of_key


class PgDocuments(StreamedDocuments):
    """The documents of a PostgreSQL index by id (ids and content hashes read at open)."""

    def __init__(self, conn: Any, loc: Location) -> None:
        self.conn, self.loc = conn, loc
        rows = conn.execute(f'SELECT id, content_hash FROM {loc.table("documents")} ORDER BY id COLLATE "C"').fetchall()
        self.hashes = dict(rows)
        self.ids = [r[0] for r in rows]

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[str]:
        return iter(self.ids)

    def __contains__(self, key: object) -> bool:
        return key in self.hashes

    def __getitem__(self, doc_id: str) -> Document:
        if doc_id not in self.hashes:
            raise KeyError(doc_id)
        row = self.conn.execute(f"SELECT {DOC_COLUMNS} FROM {self.loc.table('documents')} WHERE id = %s",
                                (doc_id,)).fetchone()
        return document_of(row)

    def _stream(self) -> Iterator[Document]:
        sql = f'SELECT {DOC_COLUMNS} FROM {self.loc.table("documents")} ORDER BY id COLLATE "C"'
        return map(document_of, streamed(self.conn, "glassrag_documents", sql, 2000))

