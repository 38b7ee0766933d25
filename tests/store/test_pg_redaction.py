"""Issue 28.2: the password of a PostgreSQL URL is never shown or saved. A session against a
real server (tests/store/conftest.py) with a password in the URL: every output of ingest, ask,
eval, an error, the run file eval writes, and the web pages and their logs are searched for it."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from glassrag.store.pgschema import redact

PASSWORD = "Sw0rdfish-28-2"


def test_redact_removes_the_password_of_urls_and_keywords() -> None:
    assert redact(f"postgresql://postgres:{PASSWORD}@db/x?schema=a") == "postgresql://postgres:***@db/x?schema=a"
    assert redact(f"index postgresql://u:{PASSWORD}@/p?host=/tmp and more") == "index postgresql://u:***@/p?host=/tmp and more"
    assert redact(f"postgresql:///p?password={PASSWORD}&schema=a") == "postgresql:///p?password=***&schema=a"
    assert redact("/home/me/index") == "/home/me/index"


@pytest.mark.slow
def test_no_output_of_a_postgresql_session_holds_the_password(corpus: Path, pg_url, tmp_path: Path,
                                                               caplog) -> None:
    url = pg_url().replace("postgres:@", f"postgres:{PASSWORD}@")
    assert PASSWORD in url

    def glassrag(*args: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "glassrag.cli", *map(str, args)],
                              capture_output=True, text=True, timeout=300)

    from tests.test_cli import GOLDEN

    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    run_file = tmp_path / "run.json"
    done = [glassrag("ingest", corpus, "--store", url),
            glassrag("ingest", corpus, "--store", url),  # nothing changed
            glassrag("ask", "what does E-4107 mean", "--store", url),
            glassrag("ask", "what does E-4107 mean", "--store", url, "--json"),
            glassrag("eval", "--store", url, "--golden", golden, "--out", run_file),
            glassrag("eval", "--store", url, "--golden", golden, "--save", "x"),  # an error
            glassrag("ask", "anything", "--store", url.replace("schema=", "schema=x")),  # no index
            glassrag("config", "--store", url)]
    assert [d.returncode for d in done] == [0, 0, 0, 0, 0, 2, 3, 0], [d.stderr for d in done]
    assert "index postgresql://postgres:***@" in done[0].stdout  # the location is still named
    for d in done:
        assert PASSWORD not in d.stdout + d.stderr, d.args
    assert PASSWORD not in run_file.read_text(encoding="utf-8")
    assert json.loads(run_file.read_text())["index"]["path"].startswith("postgresql://postgres:***@")

    pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    caplog.set_level(logging.DEBUG)
    with TestClient(create_app([url])) as client:
        pages = [client.get(p) for p in ("/ask?q=what+does+E-4107+mean", "/ask.json?q=E-4107", "/analytics",
                                         "/analytics.json", "/documents.json", "/lab.json", "/extra.json",
                                         "/glossary", "/runs/nope", "/lab/losses.json")]
    for page in pages:
        assert PASSWORD not in page.text, page.url
    assert PASSWORD not in caplog.text
