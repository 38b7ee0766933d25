"""Hostile contents of a PostgreSQL index's tables (issue 51, Medium 8), against the real
server of tests/store/conftest.py: each is "store damaged: TABLE/COLUMN ..., re-ingest" (a
StoreError, exit 3 from the CLI, 503 on a page) where it is decoded, never a traceback. Before,
a JSON string in `sections` was iterated character by character, a pickled or truncated array
reached np.load, a `meta` value that is not an object reached dict() or a subscript."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

from glassrag.errors import StoreError
from glassrag.pipeline import Pipeline
from glassrag.store import open_store
from tests.cli_helper import glassrag
from tests.store.conftest import pg_server, pg_url  # noqa: F401 - the real PostgreSQL of tests/store


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array, allow_pickle=True)
    return out.getvalue()


SECTION = '{"locator": "lines 1-2", "start": 0, "end": 5}'
# (what is planted, the SQL that plants it (t: a table's quoted name), its parameters)
HOSTILE = [
    ("sections a JSON string", "UPDATE {documents} SET sections = %s::jsonb", ('"lines 1-2"',)),
    ("sections a number", "UPDATE {documents} SET sections = %s::jsonb", ("42",)),
    ("sections of numbers", "UPDATE {documents} SET sections = %s::jsonb", ("[1, 2]",)),
    ("a section without a locator", "UPDATE {documents} SET sections = %s::jsonb", ('[{"start": 0, "end": 5}]',)),
    ("a section's start a string", "UPDATE {documents} SET sections = %s::jsonb",
     ('[{"locator": "x", "start": "0", "end": 5}]',)),
    ("a section's headings a number", "UPDATE {documents} SET sections = %s::jsonb",
     (f'[{SECTION[:-1]}, "heading_path": 7}}]',)),
    ("metadata a list", "UPDATE {documents} SET metadata = %s::jsonb", ("[1, 2]",)),
    ("a chunk's heading_path a string", "UPDATE {chunks} SET heading_path = %s::jsonb", ('"Intro"',)),
    ("meta config a list", "UPDATE {meta} SET value = %s::jsonb WHERE key = 'config'", ("[1]",)),
    ("meta superseded a string", "UPSERT superseded", ('"x"',)),
    ("meta sources a number", "UPSERT sources", ("5",)),
    ("meta extra a string", "UPSERT extra", ('"calibrated"',)),
    ("meta lsa a string", "UPDATE {meta} SET value = %s::jsonb WHERE key = 'lsa'", ('"x"',)),
    ("meta lsa vocab a number", "UPDATE {meta} SET value = jsonb_set(value, '{{vocab}}', %s::jsonb) "
                                "WHERE key = 'lsa'", ("5",)),
    ("meta parts a list", "UPSERT parts", ("[1]",)),
    ("meta generation a string", "UPDATE {meta} SET value = %s::jsonb WHERE key = 'generation'", ('"one"',)),
    ("meta impacts a string", "UPDATE {meta} SET value = %s::jsonb WHERE key = 'impacts'", ('"k1"',)),
    ("an array pickled (npy of objects)", "UPDATE {arrays} SET data = %s WHERE name = 'lsa/idf'",
     (_npy(np.array([{"a": 1}], dtype=object)),)),
    ("an array a bare pickle", "UPDATE {arrays} SET data = %s WHERE name = 'lsa/idf'",
     (pickle.dumps(np.arange(3.0)),)),
    ("an array truncated", "UPDATE {arrays} SET data = substring(data from 1 for 90) WHERE name = 'lsa/idf'", ()),
    ("an array of strings", "UPDATE {arrays} SET data = %s WHERE name = 'lsa/idf'", (_npy(np.array(["a", "b"])),)),
    ("an array's bytes not .npy", "UPDATE {arrays} SET data = %s WHERE name = 'lsa/term_vectors'", (b"\x00\x01",)),
    ("an array of the wrong shape", "UPDATE {arrays} SET data = %s WHERE name = 'lsa/term_vectors'",
     (_npy(np.arange(3.0)),)),
    ("a block's keys truncated", "UPDATE {blocks} SET keys = substring(keys from 1 for 5)", ()),
    ("a block's impacts shorter than its keys", "UPDATE {blocks} SET impacts = substring(impacts from 1 for 0)", ()),
]


def use(url: str) -> None:
    """What a reader does with an index: open it, read every document and chunk, ask a
    question through pg-bm25 and LSA (blocks, impacts, the LSA arrays)."""
    index = open_store(url).read()
    assert len(list(index.documents.values())) == len(index.documents)
    for doc_id in index.documents:
        index.documents[doc_id]  # noqa: B018 - one SELECT each: the look-up path
    assert len(list(index.chunks)) == len(index.chunks)
    config = index.config.with_overrides(retrieve={"retrievers": ["pg-bm25", "lsa"]})
    for question in ("what does E-4107 mean", "quiet hours"):
        Pipeline(index, config).run(question)


@pytest.mark.slow
@pytest.mark.parametrize("what, sql, params", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_a_hostile_table_value_is_store_damaged(index, pg_url, what: str, sql: str,  # noqa: F811
                                                params: tuple) -> None:
    url = pg_url()
    store = open_store(url)
    store.write(index)
    use(url)  # the index as written reads and answers
    t = store.loc.table
    if sql.startswith("UPSERT "):
        store.conn.execute(f"INSERT INTO {t('meta')} VALUES (%s, %s::jsonb) ON CONFLICT (key) DO UPDATE "
                           "SET value = EXCLUDED.value", (sql.split()[1], *params))
    else:
        changed = store.conn.execute(sql.format(**{n: t(n) for n in ("documents", "chunks", "meta", "arrays",
                                                                     "blocks")}), params).rowcount
        assert changed, f"nothing planted for {what}"
    with pytest.raises(StoreError, match="store damaged: .*re-ingest|store damaged") as err:
        use(url)
    assert str(err.value).startswith("store damaged: ") and "re-ingest" in err.value.hint, err.value
    assert store.loc.schema in str(err.value)


@pytest.mark.slow
def test_the_cli_says_store_damaged_not_a_traceback(index, pg_url) -> None:  # noqa: F811
    url = pg_url()
    store = open_store(url)
    store.write(index)
    store.conn.execute(f"UPDATE {store.loc.table('documents')} SET sections = '\"lines 1-2\"'::jsonb")
    done = glassrag("ask", "what does E-4107 mean", "--store", url)
    assert done.returncode == 3 and "store damaged" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert "documents/sections" in done.stderr
