"""The PostgreSQL store against a real server (tests/store/conftest.py starts it): round trip,
incremental ingest by content hash, crash safety, concurrent writers, bad locations, and the
CLI's --store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.errors import StoreError
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.store import open_store, pgwrite
from glassrag.store.pgschema import parse_location
from tests.conftest import write_corpus


def answers(index, questions=("what does E-4107 mean", "daily allowance Lisbon", "quiet hours")):
    pipe = Pipeline(index)
    return [[(h.chunk_id, round(h.score, 6)) for h in pipe.run(q).stage("fuse").hits] for q in questions]


def bm25_of(index, question: str) -> dict[str, float]:
    pipe = Pipeline(index, index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []}))
    return {h.chunk_id: h.score for h in pipe.run(question).stage("bm25").hits}


def test_roundtrip_gives_the_same_index_and_answers(index, pg_url):
    store = open_store(pg_url())
    assert not store.exists()
    store.write(index)
    loaded = open_store(store.url).read()
    assert dict(loaded.documents.items()) == dict(index.documents)
    assert list(loaded.chunks) == list(index.chunks)
    assert loaded.chunk(index.chunks[2].id) == index.chunks[2]
    assert loaded.config == index.config
    np.testing.assert_array_equal(loaded.lsa.passage_vectors, index.lsa.passage_vectors)
    assert answers(loaded) == answers(index)


def test_incremental_ingest_keeps_term_statistics_exact(tmp_path: Path, small_config: Config, pg_url):
    docs = write_corpus(tmp_path / "docs")
    url = pg_url()
    first, _ = build_index([docs], small_config)
    open_store(url).write(first)
    (docs / "notes.txt").write_text("Quarterly notes.\nThe fleet server reboots at night.\n", encoding="utf-8")
    (docs / "new.md").write_text("# Parking\n\nThe garage opens at seven; the fleet parks on level two.\n",
                                 encoding="utf-8")
    store = open_store(url)
    second, report = build_index([docs], small_config, previous=store.read())
    assert report.changed and report.added and report.unchanged
    store.write(second)
    fresh, _ = build_index([docs], small_config)  # the same corpus built from nothing
    loaded = open_store(url).read()
    assert sorted(loaded.counts.vocab) == sorted(fresh.counts.vocab)
    with store.conn.cursor() as cur:
        df = dict(cur.execute(f"SELECT term, df FROM {store.loc.table('terms')}").fetchall())
    fresh_df = np.diff(fresh.counts.tf.indptr)
    assert df == {t: int(fresh_df[j]) for t, j in fresh.counts.vocab.items()}
    for q in ("fleet server", "garage parking level", "daily allowance Lisbon"):
        assert bm25_of(loaded, q) == pytest.approx(bm25_of(fresh, q), rel=1e-6)


def test_a_crash_in_the_middle_of_a_write_leaves_the_previous_index(index, tmp_path, small_config,
                                                                     pg_url, monkeypatch):
    url = pg_url()
    open_store(url).write(index)
    before = answers(open_store(url).read())
    docs = write_corpus(tmp_path / "more", {"extra.md": "# Extra\n\nA whole new document about quiet hours.\n"})
    bigger, _ = build_index([docs], small_config, previous=open_store(url).read())

    def boom(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(pgwrite, "_insert_postings", boom)
    with pytest.raises(OSError, match="simulated"):
        open_store(url).write(bigger)
    monkeypatch.undo()
    after = open_store(url).read()
    assert len(after.documents) == len(index.documents)
    assert answers(after) == before


def test_a_writer_that_read_an_older_generation_is_refused(index, pg_url):
    url = pg_url()
    open_store(url).write(index)
    a, b = open_store(url), open_store(url)
    read_a, read_b = a.read(), b.read()
    read_a.extra["note"] = "a"
    a.write(read_a)
    read_b.extra["note"] = "b"
    with pytest.raises(StoreError, match="changed since this command read it"):
        b.write(read_b)
    assert open_store(url).read().extra["note"] == "a"


def test_many_indexes_share_one_database(index, pg_url, tmp_path, small_config):
    one, two = pg_url(), pg_url()
    open_store(one).write(index)
    other, _ = build_index([write_corpus(tmp_path / "o", {"a.md": "# A\n\nonly one document here\n"})],
                           small_config)
    open_store(two).write(other)
    assert len(open_store(one).read().documents) == len(index.documents)
    assert len(open_store(two).read().documents) == 1


def test_bad_locations_say_what_to_do(pg_url):
    with pytest.raises(StoreError, match="cannot connect") as err:
        open_store("postgresql://nobody@/nowhere?host=/nonexistent-socket-dir").read()
    assert "check that the server runs" in err.value.hint
    with pytest.raises(StoreError, match="not a plain identifier"):
        parse_location("postgresql://u@h/db?schema=Robert');DROP")
    with pytest.raises(StoreError, match="holds no glassrag index") as err:
        open_store(pg_url()).read()
    assert "glassrag ingest PATH --store" in err.value.hint


def test_a_schema_of_another_format_or_of_other_tables_is_refused(index, pg_url):
    url = pg_url()
    store = open_store(url)
    store.write(index)
    store.conn.execute(f"UPDATE {store.loc.table('meta')} SET value = '99' WHERE key = 'format_version'")
    with pytest.raises(StoreError, match="format 99"):
        open_store(url).read()
    with pytest.raises(StoreError, match="format 99"):
        open_store(url).write(index)
    foreign = open_store(pg_url())
    foreign.conn.execute(f'CREATE SCHEMA "{foreign.loc.schema}"')
    foreign.conn.execute(f"CREATE TABLE {foreign.loc.table('orders')} (id int)")
    with pytest.raises(StoreError, match="not a glassrag index"):
        foreign.write(index)


@pytest.mark.slow
def test_cli_ingest_ask_and_eval_with_store(corpus, pg_url, tmp_path):
    url = pg_url()

    def glassrag(*args):
        return subprocess.run([sys.executable, "-m", "glassrag.cli", *map(str, args)],
                              capture_output=True, text=True, timeout=300)

    done = glassrag("ingest", corpus, "--store", url)
    assert done.returncode == 0, done.stderr
    again = glassrag("ingest", corpus, "--store", url)
    assert "nothing changed" in again.stdout
    asked = glassrag("ask", "what does E-4107 mean", "--store", url)
    assert asked.returncode == 0, asked.stderr
    assert "E-4107" in asked.stdout
    missing = glassrag("ask", "anything", "--store", url.replace("schema=", "schema=x"))
    assert missing.returncode == 3 and "holds no glassrag index" in missing.stderr

    from tests.test_cli import GOLDEN

    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    assert glassrag("golden", "check", golden, "--store", url).returncode == 0
    evaluated = glassrag("eval", "--store", url, "--golden", golden, "--out", tmp_path / "run.json")
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads((tmp_path / "run.json").read_text())["answer"]["metrics"]["hit@1"]["n"] == 2
    saved = glassrag("eval", "--store", url, "--golden", golden, "--save", "x")
    assert saved.returncode == 2 and "--out FILE" in saved.stderr
    settings = glassrag("config", "--store", url)
    assert settings.returncode == 0 and "postgres.ef_search" in settings.stdout


def test_serve_answers_from_an_index_in_postgresql(index, pg_url):
    pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
    from urllib.parse import urlencode

    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    url = pg_url()
    open_store(url).write(index)
    client = TestClient(create_app([url]), base_url="http://127.0.0.1")
    answer = client.get("/ask.json?" + urlencode({"q": "what does E-4107 mean"}))
    assert answer.status_code == 200, answer.text
    assert "E-4107" in json.dumps(answer.json())
    assert client.get("/documents.json").status_code == 200


def test_an_older_format_is_migrated_when_opened(index, pg_url, monkeypatch):
    from glassrag.store import pgschema

    url = pg_url()
    store = open_store(url)
    store.write(index)
    current = pgschema.PG_FORMAT
    monkeypatch.setattr(pgschema, "PG_FORMAT", current + 1)
    monkeypatch.setitem(pgschema.MIGRATIONS, current, lambda loc: [
        f"ALTER TABLE {loc.table('documents')} ADD COLUMN note text"])
    read = open_store(url).read()  # the first glassrag to open it migrates it
    assert pgschema.stored_format(store.conn, store.loc) == current + 1
    open_store(url).write(read)
    assert store.conn.execute(f"SELECT count(note) FROM {store.loc.table('documents')}").fetchone()[0] == 0
    assert answers(open_store(url).read()) == answers(index)


def test_a_database_where_pgvector_cannot_be_enabled_says_so(pg_server, index):
    from glassrag.store import pgserver

    admin = open_store(pgserver.url(pg_server)).conn
    admin.execute("DROP DATABASE IF EXISTS noext")
    admin.execute("DROP ROLE IF EXISTS plain")
    admin.execute("CREATE ROLE plain LOGIN")
    admin.execute("CREATE DATABASE noext OWNER plain")
    url = pgserver.url(pg_server, "idx").replace("postgres:@/postgres?", "plain@/noext?")
    with pytest.raises(StoreError, match="cannot enable pgvector") as err:
        open_store(url).write(index)
    assert "CREATE EXTENSION vector" in err.value.hint
    assert not open_store(url).exists()  # nothing was left behind


def test_postings_of_a_word_the_terms_table_lacks_are_refused_on_read_and_on_write(
        tmp_path: Path, small_config: Config, pg_url):
    """The terms table lost a word that has postings (a damaged or hand-edited store): reading
    used to count that word's postings for the next word by id, and rewriting them gave them id 0,
    another word's; now a read says which ids are missing, and a write stops, names the word and
    changes nothing."""
    docs = write_corpus(tmp_path / "docs")
    url = pg_url()
    first, _ = build_index([docs], small_config)
    store = open_store(url)
    store.write(first)
    store.conn.execute(f"DELETE FROM {store.loc.table('terms')} WHERE term = 'lisbon'")
    with pytest.raises(StoreError, match="term id"):
        open_store(url).read()
    count = f"SELECT (SELECT count(*) FROM {store.loc.table('postings')}), (SELECT count(*) FROM {store.loc.table('documents')})"
    before = store.conn.execute(count).fetchone()
    (docs / "scanner.md").unlink()  # a document gone: the postings are rewritten
    second, _ = build_index([docs], small_config)
    with pytest.raises(StoreError, match="'lisbon'"):
        open_store(url).write(second)
    assert store.conn.execute(count).fetchone() == before
    store.conn.execute(f"DELETE FROM {store.loc.table('terms')}")  # every word gone, the postings kept
    with pytest.raises(StoreError, match="term id"):
        open_store(url).read()
