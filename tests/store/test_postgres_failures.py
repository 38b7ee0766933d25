"""PostgreSQL failures that once ended in a traceback (issue 28, item 9), against the real
server of tests/store/conftest.py: another application's `meta` table, a format_version that
is not a whole number, the writer's session killed mid-write, an unparsable URL, and
`serve --store` pages that expected a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glassrag.errors import StoreError
from glassrag.store import open_store, pgwrite
from glassrag.store.pgschema import parse_location
from tests.cli_helper import glassrag
from tests.conftest import write_corpus
from tests.store.test_postgres import answers


@pytest.mark.slow
def test_another_applications_meta_table_is_named_not_a_traceback(corpus: Path, pg_url):
    url = pg_url()
    store = open_store(url)
    store.conn.execute(f'CREATE SCHEMA "{store.loc.schema}"')
    store.conn.execute(f"CREATE TABLE {store.loc.table('meta')} (name text, created date)")
    for args in (["ingest", corpus, "--store", url], ["ask", "what does E-4107 mean", "--store", url]):
        done = glassrag(*args)
        assert done.returncode == 3 and "Traceback" not in done.stderr, done.stderr
        assert "table meta that is not a glassrag index's" in done.stderr and "?schema=NAME" in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize("value", ['"two"', "1.5", "[1]", "true"])
def test_a_format_version_that_is_not_a_whole_number_is_a_message(index, pg_url, value: str):
    url = pg_url()
    store = open_store(url)
    store.write(index)
    store.conn.execute(f"UPDATE {store.loc.table('meta')} SET value = %s::jsonb WHERE key = 'format_version'",
                       (value,))
    with pytest.raises(StoreError, match="not a whole number"):
        open_store(url).read()
    done = glassrag("ask", "quiet hours", "--store", url)
    assert done.returncode == 3 and "not a whole number" in done.stderr and "Traceback" not in done.stderr


def test_the_writers_session_killed_mid_write_is_a_message_and_the_index_is_intact(
        index, tmp_path: Path, small_config, pg_url, monkeypatch):
    """The server ends the writer's session (pg_terminate_backend) while it inserts postings."""
    from glassrag.indexer import build_index

    url = pg_url()
    open_store(url).write(index)
    before = answers(open_store(url).read())
    docs = write_corpus(tmp_path / "more", {"extra.md": "# Extra\n\nA new document about quiet hours.\n"})
    bigger, _ = build_index([docs], small_config, previous=open_store(url).read())
    real = pgwrite._insert_postings
    killer = open_store(url)

    def killed(conn, *args, **kwargs):
        killer.conn.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        return real(conn, *args, **kwargs)

    monkeypatch.setattr(pgwrite, "_insert_postings", killed)
    with pytest.raises(StoreError, match="PostgreSQL failed while writing") as err:
        open_store(url).write(bigger)
    assert "the index is as it was before" in err.value.hint and "Traceback" not in str(err.value)
    monkeypatch.undo()
    after = open_store(url).read()
    assert len(after.documents) == len(index.documents) and answers(after) == before


@pytest.mark.slow
@pytest.mark.parametrize("url", ["postgresql://[::1", "postgresql://u@h:notaport/db"])
def test_an_unparsable_url_is_a_message(url: str):
    with pytest.raises(StoreError, match="is not a PostgreSQL URL"):
        parse_location(url)
    done = glassrag("ask", "anything", "--store", url)
    assert done.returncode == 3 and "is not a PostgreSQL URL" in done.stderr and "Traceback" not in done.stderr


def test_serve_store_analytics_and_lab_pages_answer(index, pg_url):
    pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    url = pg_url()
    open_store(url).write(index)
    client = TestClient(create_app([url]), base_url="http://127.0.0.1")
    for page in ("/analytics", "/analytics.json", "/lab/losses", "/lab/losses.json"):
        r = client.get(page)
        assert r.status_code < 500, (page, r.text[-1500:])
    assert client.get("/analytics.json").json()["sweeps"] == []
    assert json.dumps(client.get("/analytics.json").json()).count("PASSWORD") == 0
