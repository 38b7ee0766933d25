"""What the web app must refuse or neutralise: scripts in documents, paths that climb out of
the index, oversized or malformed requests, foreign Host headers, other origins."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from starlette.testclient import TestClient

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore
from glassrag.web.guard import CSP
from glassrag.web.server import create_app

PAGES = ["/", "/ask", "/ask?q=What+is+the+probation+period%3F", "/analytics", "/runs/defaults-test", "/documents",
         "/documents/faq", "/glossary"]
TWINS = ["/.json", "/ask.json?q=probation", "/analytics.json", "/runs/defaults-test.json", "/documents.json",
         "/documents/faq.json", "/glossary.json", "/extra.json"]
EVIL = """# Release <script>alert(1)</script> notes

The installer <script>alert(1)</script> runs on <img src=x onerror=alert(2)> every laptop.
"Quotes" & <b>ampersands</b> stay text. See <a href="https://example.com/">the vendor</a>.
"""


@pytest.fixture(scope="module")
def evil_client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    docs = tmp_path_factory.mktemp("evil-docs")
    (docs / "release.md").write_text(EVIL, encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\nThe laptop installer needs a licence key.\n", encoding="utf-8")
    index, report = build_index([docs], Config().with_overrides(lsa={"dim": 2}))
    assert not report.failed
    folder = tmp_path_factory.mktemp("evil") / "idx"
    EmbeddedStore(folder).write(index)
    return TestClient(create_app([folder]), base_url="http://127.0.0.1")


def test_document_text_is_escaped_everywhere(evil_client: TestClient):
    doc_id = evil_client.get("/documents.json").json()["documents"][1]["id"]
    pages = ["/documents", f"/documents/{doc_id}", "/ask?" + urlencode({"q": "installer script alert"})]
    assert "release" in doc_id
    for page in pages:
        html = evil_client.get(page).text
        assert "<script" not in html.lower(), page
        assert "<img" not in html and "onerror=" not in html.replace("onerror=alert(2)&gt;", ""), page
        assert '<a href="https://example.com/">' not in html, page
    viewer = evil_client.get(f"/documents/{doc_id}").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in viewer
    answer = evil_client.get("/ask.json?" + urlencode({"q": "installer script alert"})).json()
    assert "<script>alert(1)</script>" in answer["answer"]["passage"]["text"]  # JSON carries the text as is


def test_the_question_itself_is_escaped(client: TestClient):
    html = client.get("/ask?" + urlencode({"q": '"><script>alert(1)</script> E-4107'})).text
    assert "<script" not in html
    assert 'value="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt; E-4107"' in html


@pytest.mark.parametrize("path", PAGES + TWINS + ["/static/glassrag.css", "/nope", "/nope.json"])
def test_every_response_carries_the_security_headers(client: TestClient, path: str):
    r = client.get(path)
    assert r.headers["content-security-policy"] == CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert "default-src 'self'" in CSP and "unsafe-inline" not in CSP and "http" not in CSP


@pytest.mark.parametrize("path", PAGES)
def test_pages_load_nothing_from_another_host_and_run_no_inline_code(client: TestClient, path: str):
    html = client.get(path).text
    for url in re.findall(r'(?:src|href|action)="([^"]*)"', html):
        assert url.startswith(("/", "#")) and not url.startswith("//"), url
    assert "<script" not in html
    assert " style=" not in html and "<style" not in html  # the CSP allows the stylesheet only
    assert not re.search(r"\son[a-z]+=", html)  # no inline event handlers


# encoded: an HTTP client resolves a literal ../ before sending (the live-server test sends one raw)
TRAVERSALS = ["..%2F..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2fCURRENT", "..%5C..%5Cetc%5Cpasswd",
              "%2Fetc%2Fpasswd", "....%2F%2F....%2F%2Fetc%2Fpasswd", "%2e%2e", "..%2FCURRENT",
              "..%2Fruns%2Fdefaults-test", "%00", "defaults-test%00"]


@pytest.mark.parametrize("name", TRAVERSALS)
@pytest.mark.parametrize("route", ["/runs/{}", "/runs/{}.json", "/documents/{}", "/documents/{}.json",
                                   "/static/{}", "/documents/faq/{}", "/runs/{}/x.json"])
def test_no_path_parameter_reads_outside_the_index(client: TestClient, route: str, name: str):
    r = client.get(route.format(name))
    assert 400 <= r.status_code < 500, (route, name, r.status_code)
    assert "root:" not in r.text and "gen-" not in r.text and "Traceback" not in r.text


def test_only_listed_run_files_are_served(client: TestClient, demo_index: Path):
    generation = (demo_index / "CURRENT").read_text().strip()
    for name in ["manifest", "CURRENT", generation, "defaults-test.json"]:
        r = client.get(f"/runs/{name}.json")
        assert r.status_code == 404 and "runs of this index: defaults-test, plain-test" in r.json()["hint"]
    assert client.get(f"/runs/..%2F{generation}%2Fmanifest.json").status_code == 404


@pytest.mark.parametrize("index", ["../demo", "..%2F..%2Fetc", "/etc", "nope"])
def test_the_index_parameter_names_a_served_index_only(client: TestClient, index: str):
    r = client.get(f"/documents.json?index={index}")
    assert r.status_code == 404 and "indexes served: demo" in r.json()["hint"]


async def _raw_get(app, path: str, query: bytes) -> tuple[int, bytes]:
    """One GET straight into the ASGI app (HTTP clients refuse to send a 100 KB URL)."""
    scope = {"type": "http", "http_version": "1.1", "method": "GET", "scheme": "http", "path": path,
             "raw_path": path.encode(), "query_string": query, "root_path": "",
             "headers": [(b"host", b"127.0.0.1")], "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 9)}
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], body


def test_a_100_kb_query_string_gets_a_4xx_with_a_message(demo_index: Path):
    import asyncio

    status, body = asyncio.run(_raw_get(create_app([demo_index]), "/ask", b"q=" + b"a" * 100_000))
    assert status == 414 and b"the limit is 16,384" in body and b"Traceback" not in body


def test_a_question_over_the_limit_gets_a_400(client: TestClient):
    long_question = client.get("/ask.json?" + urlencode({"q": "battery " * 600}))
    assert long_question.status_code == 400 and "limit is 4000" in long_question.json()["error"]


@pytest.mark.parametrize("query, status, words", [
    ("bm25.k1=abc", 400, "bm25.k1"), ("bm25.k1=nan", 400, "must be a number from 0 to 100"), ("bm25.b=2", 400, "must be a number from 0 to 1"),
    ("answer.k=0", 400, "answer.k"), ("answer.k=1.5", 400, "must be an integer"),
    ("gate.enabled=maybe", 400, "true or false"),
    ("rerank.method=magic", 400, "must be one of: none, auto"), ("role.lsa=sometimes", 400, "role"),
    ("role.neural=fused", 400, "no retriever"), ("role.bm25=off", 400, "no retriever is fused"),
    ("chunk.size=10", 400, "fixed when the index is built"), ("rerank.model=%2Fetc", 400, "cannot be set"),
    ("nope.k=1", 400, "unknown setting"), ("colour=red", 400, "unknown parameter"),
    ("q=a&q=b", 400, "given twice"), ("q=the+of+and", 400, "nothing searchable"),
    ("q=%ff%fe", 400, "nothing searchable"), ("q=%zz", 200, ""), ("run=nope&q=x", 404, "no run named"),
])
def test_malformed_parameters_get_a_4xx_with_a_message(client: TestClient, query: str, status: int, words: str):
    for page in ("/ask", "/ask.json"):
        r = client.get(f"{page}?{query}")
        assert r.status_code == status, (page, query, r.text[:300])
        assert "Traceback" not in r.text
        if status >= 400 and page.endswith(".json"):
            assert words in r.json()["error"] + r.json()["hint"]
        elif status >= 400:
            assert "<h1>" in r.text


def test_foreign_host_headers_are_refused(client: TestClient):
    r = client.get("/ask", headers={"host": "attacker.example:8765"})
    assert r.status_code == 421 and "127.0.0.1" in r.text
    assert client.get("/ask", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/ask", headers={"host": "[::1]:8765"}).status_code == 200


def test_an_app_for_another_address_answers_any_host(demo_index: Path):
    open_client = TestClient(create_app([demo_index], allowed_hosts=None), base_url="http://192.0.2.7")
    assert open_client.get("/glossary.json").status_code == 200


def test_only_get_is_allowed_except_the_forms_that_post(client: TestClient):
    assert client.post("/glossary", data={"q": "x"}).status_code == 405
    r = client.post("/ask", data={"q": "x"})  # the Generate form's POST, without the server's token
    assert r.status_code == 403 and "Traceback" not in r.text


def test_a_bug_shows_no_internals(client: TestClient, monkeypatch: pytest.MonkeyPatch):
    from glassrag.web import documents

    def broken(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr("glassrag.web.pages.documents_view", broken)
    r = client.get("/documents")
    assert r.status_code == 500 and "secret internal detail" not in r.text and "Traceback" not in r.text
    assert documents.documents_view is not broken


def test_an_index_folder_that_is_not_an_index_is_refused(tmp_path: Path):
    from glassrag.errors import StoreError

    with pytest.raises(StoreError, match="not a glassrag index"):
        create_app([tmp_path])
