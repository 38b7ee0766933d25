"""Issue 51.10 and the Low item on keys in URLs: the generation key (GLASSRAG_GENERATE_KEY) is
sent only to the endpoint's own origin, never across a redirect to another host or port; a
key written in the endpoint's URL (`?api_key=`) is shown and saved as `***`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from glassrag.errors import GenerationError
from glassrag.generate.endpoint import Endpoint, origin

ANSWER = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()


class Server:
    """Loopback: a POST is redirected (302) to `to` + its path when `to` is set, else answered;
    a GET (where urllib follows a 302 of a POST) is answered. Records each request's Authorization."""

    def __init__(self) -> None:
        self.auth: list[str | None] = []
        self.to: str | None = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                server.auth.append(self.headers.get("Authorization"))
                if self.command == "POST":
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.command == "POST" and server.to:
                    self.send_response(302)
                    self.send_header("Location", server.to + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(ANSWER)))
                self.end_headers()
                self.wfile.write(ANSWER)

            do_GET = do_POST = _answer  # noqa: N815

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


@pytest.fixture
def two() -> Iterator[tuple[Server, Server]]:
    a, b = Server(), Server()
    yield a, b
    a.close()
    b.close()


def _ask(url: str) -> str:
    return Endpoint(url, "m", 5).complete([{"role": "user", "content": "q"}], 5, 0.0, 1).text


def test_the_key_is_not_sent_across_a_redirect_to_another_origin(two, monkeypatch) -> None:
    a, b = two
    monkeypatch.setenv("GLASSRAG_GENERATE_KEY", "sekrit")
    a.to = b.base  # 127.0.0.1 on another port: another origin
    assert _ask(a.base + "/v1") == "ok"
    assert a.auth == ["Bearer sekrit"]  # the endpoint named got the key
    assert b.auth == [None]  # the server it pointed to did not


def test_a_redirect_within_the_origin_keeps_the_key(two, monkeypatch) -> None:
    a, _ = two
    monkeypatch.setenv("GLASSRAG_GENERATE_KEY", "sekrit")
    a.to = a.base.replace("127.0.0.1", "127.0.0.1")  # the same scheme, host and port
    assert _ask(a.base + "/v1") == "ok"
    assert a.auth == ["Bearer sekrit", "Bearer sekrit"]


def test_origin_fills_the_default_port() -> None:
    assert origin("http://Example.org/v1") == origin("http://example.org:80/other")
    assert origin("https://example.org/v1") != origin("http://example.org/v1")
    assert origin("http://example.org:8080/") != origin("http://example.org/")


def test_a_key_in_the_url_is_not_saved_or_shown() -> None:
    endpoint = Endpoint("http://127.0.0.1:9/v1?api_key=TOPSECRET", "m", 1)
    assert "TOPSECRET" not in json.dumps(endpoint.params())  # what traces and run files keep
    with pytest.raises(GenerationError) as raised:  # port 9 (discard): nothing answers
        endpoint.complete([{"role": "user", "content": "q"}], 5, 0.0, 1)
    assert "TOPSECRET" not in str(raised.value) and "api_key=***" in str(raised.value)
