"""Issue 51.2 and two Low items: no page shows a store's password. `serve --store
postgresql://user:PASSWORD@…` printed the URL as given on `/` and `/.json`; now a Source's name
becomes text in one place (`Source.shown`), without the password. `redact` also hides a
password holding an unencoded `@` and a key in a URL's query (`?api_key=`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.errors import redact
from glassrag.web.catalog import Source
from glassrag.web.home import home_view
from tests.store.conftest import pg_server, pg_url  # noqa: F401 - the real PostgreSQL of tests/store

SECRET = "S3cretPW"


@pytest.mark.parametrize("text, shown", [
    ("postgresql://u:S3cretPW@db.example/x", "postgresql://u:***@db.example/x"),
    ("postgresql://u:S3c@ret@PW@db.example:5432/x?schema=a", "postgresql://u:***@db.example:5432/x?schema=a"),
    ("postgresql://u:S3cretPW@/x?host=/run/pg", "postgresql://u:***@/x?host=/run/pg"),
    ("host=db password=S3cretPW user=u", "host=db password=*** user=u"),
    ("http://127.0.0.1:8080/v1?api_key=S3cretPW&x=1", "http://127.0.0.1:8080/v1?api_key=***&x=1"),
    ("http://h/v1?token=S3cretPW", "http://h/v1?token=***"),
    ("postgresql://u@db.example:5432/x", "postgresql://u@db.example:5432/x"),  # nothing to hide
    ("monkey=3 turkey=4", "monkey=3 turkey=4"),  # a word ending in "key" is not a key
])
def test_redact_hides_every_password_and_key(text: str, shown: str) -> None:
    assert redact(text) == shown


def test_a_source_shows_its_url_without_the_password() -> None:
    # nothing listens on port 9: the index cannot be read, and the front page says so
    source = Source("x", f"postgresql://u:{SECRET}@127.0.0.1:9/db?connect_timeout=1")
    assert SECRET not in source.shown and "u:***@127.0.0.1:9" in source.shown
    view = home_view(type("Catalog", (), {"sources": {"x": source}, "pending": {}})(), "x")  # type: ignore[arg-type]
    assert SECRET not in repr(view)
    assert view["corpora"][0]["path"] == source.shown


def test_the_front_page_and_its_twin_never_show_the_password(tmp_path: Path, corpus: Path,
                                                            pg_url) -> None:  # noqa: F811
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from glassrag.cli import main
    from glassrag.web.server import create_app

    url = pg_url()
    assert url.startswith("postgresql://postgres:@")  # the test server trusts its socket: any password
    with_password = url.replace("postgres:@", f"postgres:{SECRET}@", 1)
    assert main(["ingest", str(corpus), "--store", with_password]) == 0
    client = TestClient(create_app([with_password]), base_url="http://127.0.0.1")
    for page in ("/", "/.json"):
        body = client.get(page).text
        assert "postgres:***@" in body  # the store is named
        assert SECRET not in body, page


@pytest.mark.parametrize("url, conninfo", [
    ("postgresql:///db?host=/run/pg&schema=a", "postgresql:///db?host=%2Frun%2Fpg"),
    ("postgres:///db", "postgres:///db"),
    ("postgresql://u@h:5/db?schema=b", "postgresql://u@h:5/db"),
])
def test_a_url_without_a_host_keeps_its_form(url: str, conninfo: str) -> None:
    # Low item: postgresql:///db?host=… lost its // (postgresql:/db?host=…), which libpq cannot read
    import psycopg

    from glassrag.store.pgschema import parse_location

    assert parse_location(url).conninfo == conninfo
    assert psycopg.conninfo.conninfo_to_dict(conninfo)["dbname"] in ("db",)
