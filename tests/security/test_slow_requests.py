"""Issue 51, low: a client that sends half a request, or headers and then no body, held its
connection open without end. The served app (uvicorn's h11 protocol, web/deadline.py) closes a
connection whose request has not fully arrived within the bound; a whole request is answered."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from glassrag.cli import main
from glassrag.demo import demo_docs

pytest.importorskip("uvicorn")

from glassrag.web import prefork  # noqa: E402
from glassrag.web.server import create_app  # noqa: E402

BOUND_S = 1.0


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A real server of the demo index on 127.0.0.1, its requests bounded to BOUND_S seconds."""
    index = tmp_path_factory.mktemp("slow") / "demo"
    assert main(["ingest", str(demo_docs()), "--index", str(index)]) == 0
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = prefork.server(create_app([index]), request_s=BOUND_S)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(10)


def closed_after(conn: socket.socket, wait_s: float) -> float | None:
    """Seconds until the server closed `conn` (an empty read or a reset), None if still open after wait_s."""
    start = time.monotonic()
    conn.settimeout(wait_s)
    try:
        while True:
            if not conn.recv(4096):
                return time.monotonic() - start
    except ConnectionResetError:
        return time.monotonic() - start
    except TimeoutError:
        return None


def test_half_a_request_line_is_closed_within_the_bound(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET /glossary.js")
        took = closed_after(conn, BOUND_S + 4)
    assert took is not None, "the connection was still open"
    assert took <= BOUND_S + 1


def test_headers_without_their_body_are_closed_within_the_bound(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     b"Content-Length: 100\r\n\r\nq=wh")
        took = closed_after(conn, BOUND_S + 4)
    assert took is not None, "the connection was still open"
    assert took <= BOUND_S + 1


def read_response(conn: socket.socket) -> bytes:
    """One whole response (its head, then Content-Length bytes of body)."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        body += conn.recv(65536)
    return head


def test_a_whole_request_is_answered_and_the_next_one_too(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as conn:
        conn.sendall(b"GET /glossary.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert read_response(conn).startswith(b"HTTP/1.1 200")
        time.sleep(BOUND_S * 1.5)  # past the first request's bound, within the keep-alive time
        conn.sendall(b"GET /glossary.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert read_response(conn).startswith(b"HTTP/1.1 200")
