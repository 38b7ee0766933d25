"""The PostgreSQL store: an index in a schema of a PostgreSQL database with pgvector,
behind the same interface as the embedded folder store (exists, read, write, writing).

    glassrag ingest docs/ --store 'postgresql://user@host/db?schema=handbook'

Tables and migrations: store/pgschema.py; the transactional, incremental write:
store/pgwrite.py; chunks and documents read on demand: store/pgtables.py; the SQL of the
pg-* retrievers: store/pgsearch.py. `read` gives an Index whose term counts come from the
postings table, so every in-memory stage (BM25, RM3, the gate's signals) works unchanged,
and whose `chunks.pg` is this store, through which the pg-* retrievers search in SQL.
"""

from __future__ import annotations

import io
import json
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
import scipy.sparse as sp

from glassrag.config import Config
from glassrag.errors import StoreError
from glassrag.lexical.bm25 import Columns, TermCounts
from glassrag.schema.fitted import read_extra
from glassrag.store.base import Embedded, Index, Part, Stored
from glassrag.store import pgschema
from glassrag.store.pgcheck import DECODING, an_array, an_object, damaged, retried
from glassrag.store.pgschema import (IDENTIFIER, Location, check_format, connect, migrate, parse_location,
                                     redact, lost, stored_format)
from glassrag.store.shapes import NUMBER
from glassrag.store.pgtables import PgChunks, PgDocuments

POLL_SECONDS = 0.2
# meta values that are JSON objects when present (store/pgwrite.py writes them so)
OBJECTS = ("config", "superseded", "sources", "extra", "lsa", "parts")
T = TypeVar("T")


class PostgresStore:
    """`wait`: seconds a writer waits for another writer of the same schema."""

    def __init__(self, url: str, wait: float = 60.0, notify: Callable[[str], None] | None = None) -> None:
        self.url = url
        self.loc: Location = parse_location(url)
        self.wait, self.notify = wait, notify
        self._conn: Any = None
        self._read_generation: int | None = None
        self._lock_conn: Any = None

    def __str__(self) -> str:
        return str(self.loc)

    @property
    def conn(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = connect(self.loc, autocommit=True)
        return self._conn

    def new_connection(self) -> Any:
        """A connection of its own (a retriever running in its own thread)."""
        return connect(self.loc, autocommit=True)

    def retried(self, work: Callable[[Any], T], doing: str = "reading") -> T:
        """`work(self.conn)`, once more on a fresh connection when this one died (the server
        restarted); StoreError when the server cannot be reached (store/pgcheck.py)."""
        return retried(lambda: self.conn, work, self.loc, doing)

    def exists(self) -> bool:
        return self.retried(lambda conn: stored_format(conn, self.loc)) is not None

    def generation(self) -> str:
        """Changes with every write (the web app re-reads an index when it changes)."""
        row = self.retried(lambda conn: conn.execute(
            f"SELECT value FROM {self.loc.table('meta')} WHERE key = 'generation'").fetchone())
        if row is None or not isinstance(row[0], int) or isinstance(row[0], bool):
            raise damaged(self.loc, "meta/generation", f"holds {str(row and row[0])[:40]!r}, not a whole number")
        return f"pg-{row[0]}"

    # writing ---------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[None]:
        """A session advisory lock on the schema for a whole read-change-write, so a second
        writer waits (up to `wait` seconds) and then reads what the first wrote."""
        if self._lock_conn is not None:  # re-entrant
            yield
            return
        conn = connect(self.loc, autocommit=True)
        key = "glassrag-writer:" + self.loc.schema
        deadline, told = time.monotonic() + self.wait, False
        while not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0]:
            if time.monotonic() >= deadline:
                conn.close()
                raise StoreError(f"{self.loc} is being written by another glassrag; waited {self.wait:g} s",
                                 "let it finish and run this again, or wait longer with --wait SECONDS")
            if not told and self.notify is not None:
                self.notify("another session holds the schema's writer lock")
                told = True
            time.sleep(POLL_SECONDS)
        self._lock_conn = conn
        try:
            yield
        finally:
            self._lock_conn = None
            conn.close()

    def write(self, index: Index) -> None:
        from glassrag.store.pgwrite import write_index

        import psycopg

        conn = connect(self.loc)
        try:
            self._read_generation = write_index(conn, self.loc, index, self._read_generation)
        except psycopg.Error as e:
            raise lost(self.loc, e, "writing") from None
        try:
            conn.autocommit = True
            # after the commit (VACUUM runs outside a transaction): the visibility map, so BM25
            # reads postings by index-only scans, and fresh statistics for the planner
            t = self.loc.table
            conn.execute(f"VACUUM (ANALYZE) {t('postings')}, {t('terms')}, {t('chunks')}, {t('stats')}, "
                         f"{t('blocks')}")
        except psycopg.Error:
            pass  # the index is written and committed; only the planner's statistics are older
        finally:
            conn.close()

    # reading ---------------------------------------------------------------------------

    def read(self) -> Index:
        """The index; read again from the start on a fresh connection when the connection
        died, and "store damaged" for a value that is not what glassrag writes."""
        return self.retried(self._read)

    def _read(self, conn: Any) -> Index:
        loc = self.loc
        version = stored_format(conn, loc)
        if version is None:
            raise StoreError(f"{loc} holds no glassrag index",
                             f"build one there: glassrag ingest PATH --store '{redact(self.url)}'")
        check_format(version, loc)
        if version < pgschema.PG_FORMAT:
            migrate(conn, loc)
        meta = dict(conn.execute(f"SELECT key, value FROM {loc.table('meta')}").fetchall())
        if "config" not in meta:
            raise StoreError(f"{loc} holds an index that was never completely written",
                             f"ingest again: glassrag ingest PATH --store '{redact(self.url)}'")
        for key in OBJECTS:
            an_object(loc, f"meta/{key}", meta.get(key))
        if not isinstance(meta.get("generation"), int) or isinstance(meta["generation"], bool):
            raise damaged(loc, "meta/generation", f"holds {str(meta.get('generation'))[:40]!r}, not a whole number")
        self._read_generation = meta["generation"]
        try:
            config = Config.from_dict(meta["config"], origin=str(loc), layer="index")
            extra = read_extra(meta.get("extra") or {})
        except DECODING as e:
            raise damaged(loc, "meta/config or meta/extra", e) from None
        chunks = PgChunks(self, conn, loc)
        documents = PgDocuments(self, conn, loc)
        counts = self._counts(chunks)
        doc_chunks: dict[str, int] = {d: 0 for d in documents.ids}
        for d in chunks.doc_ids:
            if d not in doc_chunks:
                raise damaged(loc, "chunks/doc_id", f"names document {d[:60]!r}, which documents lacks")
            doc_chunks[d] += 1
        stored = Stored(None, dict(meta.get("superseded") or {}), meta.get("newest_date"), doc_chunks,
                        documents.hashes, [d for d, n in doc_chunks.items() if n == 0], None, counts)
        return Index(config, documents, chunks, counts, self._lsa(meta, len(chunks)), extra,
                     self._embeddings(chunks), stored, dict(meta.get("sources") or {}), self._parts(meta))

    def _counts(self, chunks: PgChunks) -> TermCounts:
        """TermCounts (chunks × terms, CSC) from the postings; terms numbered by their id order."""
        t = self.loc.table
        terms = self.conn.execute(f"SELECT id, term FROM {t('terms')} ORDER BY id").fetchall()
        ids = np.array([r[0] for r in terms], dtype=np.int64)
        vocab = {r[1]: j for j, r in enumerate(terms)}
        term_ids, keys, tf = _postings(self.conn, self.loc)
        rows = np.searchsorted(chunks.keys, keys) if chunks.keys.size and np.all(np.diff(chunks.keys) > 0) \
            else np.array([chunks.row_of_key()[int(k)] for k in keys.tolist()], dtype=np.int64)
        cols = np.searchsorted(ids, term_ids)
        known = cols < ids.size
        known[known] = ids[cols[known]] == term_ids[known]
        if not known.all():
            lost = np.unique(term_ids[~known])
            raise StoreError(f"{t('postings')} names {lost.size} term id(s) that {t('terms')} lacks "
                             f"(e.g. {', '.join(map(str, lost[:3].tolist()))}): their postings would count "
                             "for other words", "the index is damaged; write it again with glassrag ingest --store URL")
        matrix = sp.csc_matrix((tf, (rows, cols)), shape=(len(chunks), len(vocab)), dtype=np.float32)
        matrix.sort_indices()
        matrix.indices = matrix.indices.astype(np.int32, copy=False)
        lengths = self.conn.execute(f'SELECT length FROM {t("chunks")} ORDER BY doc_id COLLATE "C", position').fetchall()
        doc_len = np.array([r[0] for r in lengths], dtype=np.float32)
        return TermCounts(vocab, Columns.of(matrix), doc_len)

    def _lsa(self, meta: dict[str, Any], n: int) -> Any:
        if not meta.get("lsa"):
            return None
        from glassrag.dense.lsa import LSA

        arrays = {name.split("/", 1)[1]: an_array(self.loc, f"arrays/data {name}", data, NUMBER)
                  for name, data in self.conn.execute(
                      f"SELECT name, data FROM {self.loc.table('arrays')} WHERE name LIKE 'lsa/%'").fetchall()}
        lsa = meta["lsa"]
        words, params = lsa.get("vocab"), an_object(self.loc, "meta/lsa params", lsa.get("params"), {})
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise damaged(self.loc, "meta/lsa vocab", "not a list of terms")
        k = arrays["term_vectors"].shape[-1] if arrays.get("term_vectors", np.empty(0)).ndim == 2 else -1
        shapes = {"idf": (len(words),), "term_vectors": (len(words), k), "passage_vectors": (n, k), "variance_share": None}
        for key, shape in shapes.items():
            got = arrays.get(key)
            if got is None or (shape is not None and got.shape != shape) or (shape is None and got.ndim != 1):
                raise damaged(self.loc, f"arrays/data lsa/{key}",
                              f"holds {'nothing' if got is None else got.shape}, where {shape or 'k'} belongs")
        try:
            return LSA.from_arrays(params, dict(zip(words, range(len(words)))), arrays)
        except DECODING as e:
            raise damaged(self.loc, "meta/lsa or arrays/lsa", e) from None

    def _parts(self, meta: dict[str, Any]) -> dict[str, Part]:
        """Every retriever's own part: its parameters from meta `parts`, its arrays from `arrays`."""
        params = meta.get("parts") or {}
        for name, value in params.items():
            an_object(self.loc, f"meta/parts {name}", value)
        arrays: dict[str, dict[str, np.ndarray]] = {name: {} for name in params}
        rows = self.conn.execute(
            f"SELECT name, data FROM {self.loc.table('arrays')} WHERE name LIKE 'parts/%' ORDER BY name").fetchall()
        for name, data in rows:
            if name.count("/") < 2:
                raise damaged(self.loc, "arrays/name", f"{name[:60]!r} is not parts/PART/ARRAY")
            _, part, key = name.split("/", 2)
            arrays.setdefault(part, {})[key] = an_array(self.loc, f"arrays/data {name}", data)
        return {name: Part(params[name], arrays[name]) for name in params}

    def _embeddings(self, chunks: PgChunks) -> dict[str, Embedded]:
        out = {}
        t = self.loc.table
        for name, params, dim, table in self.conn.execute(
                f"SELECT name, params, dim, table_name FROM {t('embedders')} ORDER BY name").fetchall():
            if not IDENTIFIER.match(table) or not 0 < dim <= 65_536:
                raise damaged(self.loc, f"embedders {name[:40]}", f"table {table[:60]!r}, dim {dim}")
            try:
                params = an_object(self.loc, f"embedders/params {name[:40]}",
                                   params if isinstance(params, dict) else json.loads(params))
                vectors = np.zeros((len(chunks), dim), dtype=np.float32)
                row_of = chunks.row_of_key()
                with self.conn.cursor(binary=True) as cur:
                    cur.execute(f"SELECT chunk_key, embedding::real[] FROM {t(table)}")
                    for key, values in cur:
                        vectors[row_of[key]] = values
            except DECODING as e:
                raise damaged(self.loc, f"{table}/embedding", e) from None
            out[name] = Embedded(name, params, vectors)
        return out


def _postings(conn: Any, loc: Location) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(term ids, chunk keys, tf) of every posting, by a binary COPY read into numpy."""
    buffer = io.BytesIO()
    with conn.cursor() as cur, cur.copy(
            f"COPY (SELECT term_id, chunk_key, tf FROM {loc.table('postings')}) TO STDOUT (FORMAT BINARY)") as cp:
        for block in cp:
            buffer.write(block)
    data = buffer.getvalue()
    record = np.dtype([("n", ">i2"), ("l0", ">i4"), ("term", ">i4"), ("l1", ">i4"), ("key", ">i8"),
                       ("l2", ">i4"), ("tf", ">f4")])
    body = data[19:len(data) - 2]  # the header (no extension area) and the trailer
    rows = np.frombuffer(body, dtype=record)
    return rows["term"].astype(np.int64), rows["key"].astype(np.int64), rows["tf"].astype(np.float32)
