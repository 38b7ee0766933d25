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
from glassrag.store.pgcheck import DECODING, an_object, damaged, streamed_retried
from glassrag.store.pgschema import Location
from glassrag.store.base import ChunkRows
from glassrag.store.tables import StreamedDocuments

ORDER = 'doc_id COLLATE "C", position'
CHUNK_COLUMNS = 'id, doc_id, locator, text, start, "end", position, heading_path'
DOC_COLUMNS = "id, title, source, format, sections, metadata, content_hash, text"


def chunk_of(loc: Location, row: tuple) -> Chunk:
    """A chunk's row as a Chunk; `heading_path` a list of strings, else "store damaged"."""
    cid, doc_id, locator, text, start, end, position, heading = row
    if not isinstance(heading, list) or not all(isinstance(h, str) for h in heading):
        raise damaged(loc, f"chunks/heading_path {cid[:40]}", f"holds {str(heading)[:60]!r}, not a list of headings")
    return Chunk(cid, doc_id, locator, text, start, end, position, tuple(heading))


def document_of(loc: Location, row: tuple) -> Document:
    """A document's row as a Document: `sections` a list of objects with a locator and whole
    start and end, `metadata` an object, else "store damaged" (a JSON string's characters
    were once iterated as sections, a traceback)."""
    did, title, source, fmt, sections, metadata, content_hash, text = row
    where = f"documents/sections {did[:40]}"
    if not isinstance(sections, list):
        raise damaged(loc, where, f"holds {type(sections).__name__} {str(sections)[:60]!r}, not a list of sections")
    try:
        parsed = tuple(Section.from_dict(s) for s in sections)
    except DECODING as e:
        raise damaged(loc, where, e) from None
    for s in parsed:
        if not (isinstance(s.locator, str) and type(s.start) is int and type(s.end) is int
                and all(isinstance(h, str) for h in s.heading_path)):
            raise damaged(loc, where, f"a section {str(s)[:80]} is not a locator with whole offsets")
    an_object(loc, f"documents/metadata {did[:40]}", metadata, {})
    return Document(did, title, source, fmt, text, parsed, metadata, content_hash)


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
        """`conn`: the connection `pg` reads the index on (a chunk read later takes `pg.conn`,
        which is a fresh one after a restart)."""
        self.pg, self.loc = pg, loc
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
        sql = f"SELECT {CHUNK_COLUMNS} FROM {self.loc.table('chunks')} WHERE key = %s"
        row = self.pg.retried(lambda conn: conn.execute(sql, (int(self.keys[i]),)).fetchone())
        if row is None:
            raise damaged(self.loc, "chunks", f"chunk key {int(self.keys[i])} was read at open and is gone; "
                                              "the table changed under a reader")
        return chunk_of(self.loc, row)

    def __iter__(self) -> Iterator[Chunk]:
        sql = f"SELECT {CHUNK_COLUMNS} FROM {self.loc.table('chunks')} ORDER BY {ORDER}"
        rows = streamed_retried(lambda: self.pg.conn, lambda conn: streamed(conn, "glassrag_chunks", sql, 5000),
                                self.loc)
        return (chunk_of(self.loc, row) for row in rows)

    def row_of_key(self) -> dict[int, int]:
        """chunk key -> its row in index order."""
        if self._row_of_key is None:
            self._row_of_key = {int(k): i for i, k in enumerate(self.keys.tolist())}
        return self._row_of_key


class PgDocuments(StreamedDocuments):
    """The documents of a PostgreSQL index by id (ids and content hashes read at open)."""

    def __init__(self, pg: Any, conn: Any, loc: Location) -> None:
        self.pg, self.loc = pg, loc
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
        sql = f"SELECT {DOC_COLUMNS} FROM {self.loc.table('documents')} WHERE id = %s"
        row = self.pg.retried(lambda conn: conn.execute(sql, (doc_id,)).fetchone())
        if row is None:
            raise KeyError(doc_id)
        return document_of(self.loc, row)

    def _stream(self) -> Iterator[Document]:
        sql = f'SELECT {DOC_COLUMNS} FROM {self.loc.table("documents")} ORDER BY id COLLATE "C"'
        rows = streamed_retried(lambda: self.pg.conn,
                                lambda conn: streamed(conn, "glassrag_documents", sql, 2000), self.loc)
        return (document_of(self.loc, row) for row in rows)

