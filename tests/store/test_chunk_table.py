"""Every chunk table meets the ChunkTable protocol (store/base.py) and its members agree with its
rows: the spool an index is built in, a list made a ListedChunks, the folder's FolderChunks and
PostgreSQL's PgChunks (issue 29.5: the stages read declared members, not getattr probes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore, open_store
from glassrag.store.base import ChunkTable, Index, ListedChunks
from glassrag.store.spool import SpooledChunks
from glassrag.store.tables import FolderChunks


def agrees(index: Index) -> None:
    """The table's members say what its rows say (or None, where it stores nothing)."""
    table = index.chunks
    assert isinstance(table, ChunkTable)
    rows = list(table)
    assert [table.id_of(i) for i in range(len(rows))] == [c.id for c in rows]
    assert [index.chunk_id(i) for i in range(len(rows))] == [c.id for c in rows]
    if table.ids is not None:
        assert [b.decode("utf-8") for b in table.ids.tolist()] == [c.id for c in rows]
    if table.positions is not None:
        assert {c.id: table.positions[c.id] for c in rows} == {c.id: i for i, c in enumerate(rows)}
    if table.words is not None:
        assert [int(w) for w in table.words] == [len(c.text.split()) for c in rows]
    assert [index.chunk_words(c.id) for c in rows] == [len(c.text.split()) for c in rows]


def test_a_built_index_s_spool_stores_nothing_beyond_its_rows(index: Index):
    assert isinstance(index.chunks, SpooledChunks)
    t = index.chunks
    assert (t.ids, t.positions, t.words, t.folder, t.pg) == (None, None, None, None, None)
    agrees(index)


def test_a_list_of_chunks_becomes_a_listed_table(index: Index):
    listed = replace(index, chunks=list(index.chunks))
    assert isinstance(listed.chunks, ListedChunks) and listed.chunks == list(index.chunks)
    assert listed.chunks.folder is None and listed.chunks.pg is None
    agrees(listed)


def test_the_folder_table_answers_from_its_arrays_and_names_its_generation(index: Index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    read = store.read()
    t = read.chunks
    assert isinstance(t, FolderChunks) and t.pg is None
    assert t.folder == tmp_path / "idx" / (tmp_path / "idx" / "CURRENT").read_text().strip()
    assert t.ids is not None and t.positions is not None and t.words is not None
    agrees(read)


def test_the_postgresql_table_answers_from_its_arrays_and_names_its_store(index: Index, pg_url):
    store = open_store(pg_url())
    store.write(index)
    read = open_store(store.url).read()
    t = read.chunks
    assert t.pg is not None and t.pg.url == store.url  # what the pg-* retrievers search through
    assert t.folder is None and t.ids is not None and t.positions is not None
    agrees(read)

