"""Writing an index into its PostgreSQL schema: one transaction, by content hash.

A document whose content hash is unchanged keeps its rows; a changed or removed one is
deleted (its postings and vectors first, then the document, whose chunks go with it, ON
DELETE CASCADE) and a new or changed one inserted, with COPY (into an empty table, its
indexes are dropped and built after the rows are in). Term statistics stay exact under both:

    df(t)        -= the removed chunks holding t;  += the inserted chunks holding t
    n_chunks     = count(chunks),  total_length = Σ length  (avgdl = total_length / n_chunks)

Every posting carries its BM25 impact, IDF(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| /
avgdl)) at the configured k1 and b, the float32 that lexical/bm25.py's bm25_weights computes for
the embedded store from the same counts (so pg-bm25 ranks exactly as the embedded BM25). N,
df and avgdl move with every added or removed chunk, so a write that changes any chunk, or
k1 or b, sets every impact again: a bulk load copies them in with the postings; an incremental
write copies the whole postings table afresh into postings_next and swaps it in at the end (the
old one serves readers until the commit). Either way the blocks (every term's postings best
first, store/pgprune.py) are written again from the same arrays. meta `impacts` = {k1, b} says
for what they hold.

A change of how chunks are cut or analysed, or of the embedders, rewrites every row. The
whole write is one transaction under an advisory lock on the schema: a crash, a kill or an
error at any point leaves the previous index as it was, and a writer that read generation g
refuses to commit over generation g + 1 (another writer's documents would be lost).
"""

from __future__ import annotations

import io
import json
import re
import time
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from glassrag import __version__
from glassrag.chunk.header import indexed_text
from glassrag.errors import StoreError
from glassrag.ingest.versions import superseded
from glassrag.lexical.bm25 import bm25_weights
from glassrag.schema import Chunk, Document
from glassrag.schema.fitted import read_extra
from glassrag.store.base import Index, checked_part
from glassrag.store.pgcopy import copy_arrays
from glassrag.store.pgprune import block_of
from glassrag.store.pgschema import Location, ensure, fulltext_index, postings_indexes, postings_table


def header_of(doc: Document, chunk: Chunk, header: bool) -> str:
    """What indexed_text puts in front of a chunk's text (title and headings), or ""."""
    full = indexed_text(doc, chunk, header)
    return full[: len(full) - len(chunk.text)].rstrip("\n")


def build_key(index: Index) -> dict[str, Any]:
    """What every stored row depends on: when it changes, every row is rewritten."""
    c = index.config
    return {"chunk": _plain(c.chunk), "analyze": _plain(c.analyze),
            "embedders": {n: e.params for n, e in index.embeddings.items()},
            "vectors": {"type": c.postgres.vector_type, "m": c.postgres.hnsw_m,
                        "ef_construction": c.postgres.hnsw_ef_construction}}


def _plain(section: Any) -> dict[str, Any]:
    from dataclasses import asdict

    return json.loads(json.dumps(asdict(section), default=str))


def vector_table(name: str) -> str:
    return "vec_" + (re.sub(r"[^a-z0-9_]+", "_", name.lower())[:40] or "x")


def write_index(conn: Any, loc: Location, index: Index, read_generation: int | None) -> int:
    """Write `index` into `loc` in one transaction; returns the new generation."""
    t = loc.table
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("glassrag:" + loc.schema,))
        ensure(conn, loc)
        meta = dict(conn.execute(f"SELECT key, value FROM {t('meta')}").fetchall())
        generation = int(meta.get("generation", 0))
        if read_generation is not None and generation != read_generation:
            raise StoreError(
                f"{loc} changed since this command read it (another writer made generation "
                f"{generation}); writing now would lose that writer's work",
                "run the command again: it reads the new index; nothing was written")
        key = build_key(index)
        if meta.get("build") != key:
            _clear(conn, loc)
        _write_rows(conn, loc, index, meta.get("impacts") == impacts_of(index))
        _write_meta(conn, loc, index, key, generation + 1)
    return generation + 1


def _clear(conn: Any, loc: Location) -> None:
    t = loc.table
    for (table,) in conn.execute(f"SELECT table_name FROM {t('embedders')}").fetchall():
        conn.execute(f"DROP TABLE IF EXISTS {t(table)}")
    conn.execute(f"TRUNCATE {t('embedders')}, {t('postings')}, {t('terms')}, {t('chunks')}, "
                 f"{t('documents')}")


def impacts_of(index: Index) -> dict[str, float]:
    """The k1 and b the postings' impacts are computed at (meta `impacts`)."""
    return {"k1": float(index.config.bm25.k1), "b": float(index.config.bm25.b)}


def index_weights(index: Index) -> np.ndarray:
    """bm25_weights of the index's counts at its k1 and b (those ingest computed, when it did)."""
    k1, b = index.config.bm25.k1, index.config.bm25.b
    weights = index.bm25_weights(k1, b)
    if weights is None or weights.size != index.counts.columns.nnz:
        weights = bm25_weights(index.counts, k1, b)
    return np.asarray(weights, dtype=np.float32)


def _write_rows(conn: Any, loc: Location, index: Index, impacts_current: bool) -> None:
    t = loc.table
    old = dict(conn.execute(f"SELECT id, content_hash FROM {t('documents')}").fetchall())
    hashes = index.content_hashes()
    gone = [d for d, h in old.items() if d not in index.documents or hashes[d] != h]
    fresh = {d for d in index.documents if d not in old or old[d] != hashes[d]}
    if gone:
        conn.execute(f"""UPDATE {t('terms')} t SET df = t.df - d.n FROM (
            SELECT p.term_id, count(*) AS n FROM {t('postings')} p JOIN {t('chunks')} c ON c.key = p.chunk_key
            WHERE c.doc_id = ANY(%s) GROUP BY p.term_id) d WHERE t.id = d.term_id""", (gone,))
        vector_tables = [r[0] for r in conn.execute(f"SELECT table_name FROM {t('embedders')}").fetchall()]
        for table in ["postings", *vector_tables]:
            conn.execute(f"""DELETE FROM {t(table)} WHERE chunk_key IN (
                SELECT key FROM {t('chunks')} WHERE doc_id = ANY(%s))""", (gone,))
        conn.execute(f"DELETE FROM {t('documents')} WHERE id = ANY(%s)", (gone,))
    if fresh:
        empty = not old or len(gone) == len(old)
        if empty:  # a bulk load: indexes are built once, after the rows are in
            conn.execute(f"ALTER TABLE {t('postings')} DROP CONSTRAINT postings_pkey")
            conn.execute(f'DROP INDEX "{loc.schema}".postings_chunk')
            conn.execute(f'DROP INDEX "{loc.schema}".chunks_tsv')
        _insert(conn, loc, index, fresh, empty)
        if empty:
            for statement in [*postings_indexes(loc), *fulltext_index(loc)]:
                conn.execute(statement)
    elif gone or not impacts_current:
        _rewrite_postings(conn, loc, index)
    conn.execute(f"DELETE FROM {t('terms')} WHERE df <= 0")
    conn.execute(f"""UPDATE {t('stats')} SET n_chunks = s.n, total_length = s.total FROM (
        SELECT count(*) AS n, coalesce(sum(length::float8), 0) AS total FROM {t('chunks')}) s""")
    _write_lsa(conn, loc, index)


def _insert(conn: Any, loc: Location, index: Index, fresh: set[str], bulk: bool) -> None:
    t = loc.table
    header = index.config.chunk.context_header
    documents = index.documents
    with conn.cursor() as cur, cur.copy(
            f"COPY {t('documents')} (id, title, source, format, sections, metadata, content_hash, text) "
            "FROM STDIN") as cp:
        for doc_id in sorted(fresh):
            d = documents[doc_id]
            cp.write_row((d.id, d.title, d.source, d.format, json.dumps([s.to_dict() for s in d.sections]),
                          json.dumps(dict(d.metadata), default=str), d.content_hash, d.text))
    start = int(conn.execute(f"SELECT coalesce(max(key), 0) FROM {t('chunks')}").fetchone()[0]) + 1
    rows = np.array([i for i, c in enumerate(index.chunks) if c.doc_id in fresh], dtype=np.int64)
    keys = start + np.arange(rows.size, dtype=np.int64)
    lengths = np.asarray(index.counts.doc_len, dtype=np.float32)
    with conn.cursor() as cur, cur.copy(
            f'COPY {t("chunks")} (key, id, doc_id, position, locator, start, "end", heading_path, header, '
            "text, words, length) FROM STDIN") as cp:
        for key, row in zip(keys.tolist(), rows.tolist()):
            c = index.chunks[row]
            cp.write_row((key, c.id, c.doc_id, c.position, c.locator, c.start, c.end,
                          json.dumps(list(c.heading_path)), header_of(documents[c.doc_id], c, header),
                          c.text, len(c.text.split()), float(lengths[row])))
    _insert_postings(conn, loc, index, rows, keys, bulk)
    for name, emb in index.embeddings.items():
        _insert_vectors(conn, loc, index, name, emb.params, np.asarray(emb.vectors)[rows], keys)


def _insert_postings(conn: Any, loc: Location, index: Index, rows: np.ndarray, keys: np.ndarray,
                     bulk: bool) -> None:
    """The inserted chunks' terms' df added (new terms get new ids), then their postings
    (`bulk`: the table was empty, so they are all of them) or, as every impact has changed,
    the whole postings table rewritten."""
    t = loc.table
    tf = index.counts.tf.tocsr()[rows]
    tf.sum_duplicates()
    words = sorted(index.counts.vocab, key=index.counts.vocab.get)
    used = np.unique(tf.indices)
    df = np.bincount(tf.indices, minlength=len(words))
    known = dict(conn.execute(f"SELECT term, id FROM {t('terms')} WHERE term = ANY(%s)",
                              ([words[j] for j in used.tolist()],)).fetchall())
    next_id = int(conn.execute(f"SELECT coalesce(max(id), 0) FROM {t('terms')}").fetchone()[0]) + 1
    term_id = np.zeros(len(words), dtype=np.int32)
    new_cols, new_ids = [], []
    for j in used.tolist():
        if words[j] in known:
            term_id[j] = known[words[j]]
        else:
            term_id[j] = next_id
            new_cols.append(j)
            new_ids.append(next_id)
            next_id += 1
    old_cols = [j for j in used.tolist() if words[j] in known]
    if old_cols:
        conn.execute(f"""UPDATE {t('terms')} t SET df = t.df + d.n FROM (
            SELECT unnest(%s::int[]) AS id, unnest(%s::int[]) AS n) d WHERE t.id = d.id""",
                     (term_id[old_cols].tolist(), df[old_cols].tolist()))
    if new_cols:
        with conn.cursor() as cur, cur.copy(f"COPY {t('terms')} (id, term, df) FROM STDIN") as cp:
            for j, i in zip(new_cols, new_ids):
                cp.write_row((i, words[j], int(df[j])))
    if bulk:
        _copy_postings(conn, loc, "postings", index, rows, keys, term_id)
    else:
        _rewrite_postings(conn, loc, index)


def _copy_postings(conn: Any, loc: Location, table: str, index: Index, rows: np.ndarray, keys: np.ndarray,
                   term_id: np.ndarray) -> None:
    """COPY the postings of index rows `rows` (chunk keys `keys`; term column j is term id
    term_id[j]) with their impacts into `table`."""
    tf = index.counts.tf
    # which stored count each posting is: the CSC positions, taken to rows as a CSR matrix
    kind = np.int32 if tf.data.size < np.iinfo(np.int32).max else np.int64
    position = sp.csc_matrix((np.arange(1, tf.data.size + 1, dtype=kind), tf.indices, tf.indptr),
                             shape=tf.shape).tocsr()[rows]
    at = position.data - 1
    weights = index_weights(index)
    lengths = np.asarray(index.counts.doc_len, dtype=np.float32)[rows]
    per_row = np.diff(position.indptr)
    terms, chunk_keys, impacts = term_id[position.indices], np.repeat(keys, per_row), weights[at]
    copy_arrays(conn, loc.table(table), ["term_id", "chunk_key", "tf", "len", "impact"],
                [("int4", terms), ("int8", chunk_keys), ("float4", np.asarray(tf.data, dtype=np.float32)[at]),
                 ("float4", np.repeat(lengths, per_row)), ("float4", impacts)])
    _write_blocks(conn, loc, terms, chunk_keys, impacts)


def blocks(terms: np.ndarray, keys: np.ndarray, impacts: np.ndarray) -> list[tuple[int, int, float, bytes, bytes]]:
    """The rows of `blocks` for these postings (term id, chunk key, impact each): every term's
    postings by falling impact (ties by chunk key), cut by pgprune.block_of; a row is
    (term id, block, its largest impact, its keys as int8 and impacts as float4 bytes, network order)."""
    order = np.lexsort((keys, -impacts.astype(np.float64), terms))
    terms, keys, impacts = terms[order], keys[order].astype(">i8"), impacts[order].astype(">f4")
    starts = np.flatnonzero(np.r_[True, terms[1:] != terms[:-1]])
    rank = np.arange(terms.size) - np.repeat(starts, np.diff(np.r_[starts, terms.size]))
    block = block_of(rank)
    cuts = np.flatnonzero(np.r_[True, (terms[1:] != terms[:-1]) | (block[1:] != block[:-1])])
    ends = np.r_[cuts[1:], terms.size]
    return [(int(terms[a]), int(block[a]), float(impacts[a]), keys[a:b].tobytes(), impacts[a:b].tobytes())
            for a, b in zip(cuts.tolist(), ends.tolist())]


def _write_blocks(conn: Any, loc: Location, terms: np.ndarray, keys: np.ndarray, impacts: np.ndarray) -> None:
    """Every term's impact-ordered blocks, for the index as written (all postings are given)."""
    t = loc.table
    conn.execute(f"DELETE FROM {t('blocks')}")
    with conn.cursor() as cur, cur.copy(f"COPY {t('blocks')} (term_id, block, bound, keys, impacts) "
                                        "FROM STDIN (FORMAT BINARY)") as cp:
        cp.set_types(["int4", "int4", "float4", "bytea", "bytea"])
        for row in blocks(terms, keys, impacts):
            cp.write_row(row)


def _rewrite_postings(conn: Any, loc: Location, index: Index) -> None:
    """Every posting with its impact for the index as it now is, copied into postings_next,
    indexed, and swapped in for postings (readers keep the old table until the commit)."""
    t = loc.table
    key_of = dict(conn.execute(f"SELECT id, key FROM {t('chunks')}").fetchall())
    keys = np.array([key_of[c.id] for c in index.chunks], dtype=np.int64)
    id_of = dict(conn.execute(f"SELECT term, id FROM {t('terms')}").fetchall())
    words = sorted(index.counts.vocab, key=index.counts.vocab.get)
    term_id = np.array([id_of.get(w, -1) for w in words], dtype=np.int32)
    missing = np.flatnonzero((term_id < 0) & (np.diff(index.counts.columns.indptr) > 0))
    if missing.size:  # a word with postings must have its row: no posting may point at another word's id
        raise StoreError(f"{loc.table('terms')} lacks {missing.size} word(s) that have postings, e.g. "
                         f"{', '.join(repr(words[j]) for j in missing[:3].tolist())}",
                         "nothing was changed; write the index again with glassrag ingest --store URL")
    conn.execute(f"DROP TABLE IF EXISTS {t('postings_next')}")
    conn.execute(postings_table(loc, "postings_next"))
    _copy_postings(conn, loc, "postings_next", index, np.arange(len(index.chunks)), keys, term_id)
    for statement in postings_indexes(loc, "postings_next"):
        conn.execute(statement)
    conn.execute(f"DROP TABLE {t('postings')}")
    conn.execute(f"ALTER TABLE {t('postings_next')} RENAME TO postings")
    conn.execute(f"ALTER TABLE {t('postings')} RENAME CONSTRAINT postings_next_pkey TO postings_pkey")
    conn.execute(f'ALTER INDEX "{loc.schema}".postings_next_chunk RENAME TO postings_chunk')


def _insert_vectors(conn: Any, loc: Location, index: Index, name: str, params: dict[str, Any],
                    vectors: np.ndarray, keys: np.ndarray) -> None:
    """One table per embedder, its rows copied, its HNSW index made once (pgvector keeps it
    up to date as rows come and go)."""
    t, p = loc.table, index.config.postgres
    table, kind = vector_table(name), p.vector_type
    dim = int(vectors.shape[1]) if vectors.ndim == 2 and vectors.shape[0] else int(params.get("dim", 0))
    row = conn.execute(f"SELECT dim FROM {t('embedders')} WHERE name = %s", (name,)).fetchone()
    if row is None:
        if not dim:
            return
        conn.execute(f"INSERT INTO {t('embedders')} VALUES (%s, %s, %s, %s, %s)",
                     (name, json.dumps(params), dim, kind, table))
        conn.execute(f"CREATE TABLE {t(table)} (chunk_key bigint PRIMARY KEY, embedding {kind}({dim}) NOT NULL)")
    if vectors.shape[0]:
        copy_arrays(conn, t(table), ["chunk_key", "embedding"],
                    [("int8", keys), (kind, vectors.astype(np.float32))])
    conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {t(table)} USING hnsw "
                 f"(embedding {kind}_cosine_ops) WITH (m = {int(p.hnsw_m)}, "
                 f"ef_construction = {int(p.hnsw_ef_construction)})")


def _write_lsa(conn: Any, loc: Location, index: Index) -> None:
    """The LSA model's arrays as npy bytes, its vocabulary (term -> row) in meta; and every
    retriever's own part's arrays (`parts/<name>/<array>`), its parameters in meta `parts`."""
    t = loc.table
    conn.execute(f"DELETE FROM {t('arrays')}")
    named = {f"lsa/{name}": array for name, array in index.lsa.arrays().items()} if index.lsa is not None else {}
    for part_name, part in index.parts.items():
        named.update({f"parts/{part_name}/{key}": array for key, array in checked_part(part_name, part).arrays.items()})
    for name, array in named.items():
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(array), allow_pickle=False)
        conn.execute(f"INSERT INTO {t('arrays')} VALUES (%s, %s)", (name, buffer.getvalue()))


def _write_meta(conn: Any, loc: Location, index: Index, key: dict[str, Any], generation: int) -> None:
    from glassrag.store.base import parse_date

    if isinstance(index.documents, dict) or index.stored is None:
        dates = [parse_date(d.metadata.get("date")) for d in index.documents.values() if d.metadata.get("date")]
        newest_date = max((d for d in dates if d), default=None)
        newest, replaced = (newest_date.isoformat() if newest_date else None), superseded(index.documents)
    else:  # the documents as they were read: the facts read with them hold
        newest, replaced = index.stored.newest_date, index.stored.superseded
    lsa = None
    if index.lsa is not None:
        vocab: Mapping[str, int] = index.lsa.vocab
        lsa = {"params": index.lsa.params(), "vocab": sorted(vocab, key=vocab.get)}
    values = {
        "generation": generation, "build": key, "config": index.config.stored(),
        "glassrag_version": __version__, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "counts": {"documents": len(index.documents), "chunks": len(index.chunks),
                   "terms": len(index.counts.vocab)},
        "superseded": replaced, "newest_date": newest, "impacts": impacts_of(index),
        "sources": index.sources, "extra": read_extra(index.extra), "lsa": lsa,
    }
    if index.parts:
        values["parts"] = {name: part.params for name, part in index.parts.items()}
    else:  # an index written before with parts has none now
        conn.execute(f"DELETE FROM {loc.table('meta')} WHERE key = 'parts'")
    for name, value in values.items():
        conn.execute(f"INSERT INTO {loc.table('meta')} VALUES (%s, %s) ON CONFLICT (key) DO UPDATE "
                     "SET value = EXCLUDED.value", (name, json.dumps(value, ensure_ascii=False, default=str)))
