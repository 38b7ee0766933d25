"""`glassrag serve`: the URL it prints, the loopback default, the warning for another host,
a port already taken."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import types
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the web app needs the web extra: pip install 'glassrag[web]'")

from glassrag.errors import ConfigError, StoreError  # noqa: E402
from glassrag.web import guard, server  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_glassrag_serve_prints_its_url_and_answers_on_loopback(demo_index: Path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", str(demo_index),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line and "index: demo" in line
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/glossary.json", timeout=5) as r:
                    assert json.loads(r.read())["index"] == "demo"
                    break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_another_host_is_served_with_a_loud_warning(demo_index: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture):
    started = {}
    monkeypatch.setattr(server, "check_port", lambda host, port: None)  # nothing is bound in this test
    # the one server process (prefork.server, uvicorn's Server) is made, not run
    monkeypatch.setattr(server.prefork, "server",
                        lambda app, **kw: types.SimpleNamespace(run=lambda: started.update(app=app, **kw)))
    assert server.serve([demo_index], host="0.0.0.0", port=8765, processes=1) == 0
    out, err = capsys.readouterr()
    assert "WARNING" in err and "not on this machine only" in err and "no login" in err.lower()
    assert "http://0.0.0.0:8765/" in out
    assert started["host"] == "0.0.0.0" and started["port"] == 8765
    server.serve([demo_index], processes=1)
    out, err = capsys.readouterr()
    assert "WARNING" not in err and started["host"] == "127.0.0.1" and "http://127.0.0.1:8765/" in out


@pytest.mark.parametrize("workers", [1, 2])
def test_a_port_in_use_is_a_config_error(demo_index: Path, workers: int):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ConfigError, match=f"cannot listen on 127.0.0.1:{port}"):
            server.serve([demo_index], port=port, processes=workers)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_a_folder_that_is_no_index_stops_serve_with_its_message(tmp_path: Path, workers: int):
    done = subprocess.run([sys.executable, "-m", "glassrag.cli", "serve", "--index", str(tmp_path),
                           "--port", str(free_port()), "--workers", str(workers)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == StoreError.exit_code
    assert "is not a glassrag index" in done.stderr and "glassrag ingest" in done.stderr
    assert "http://" not in done.stdout  # stopped before it said it was serving


def test_workers_below_one_are_refused(demo_index: Path):
    with pytest.raises(ConfigError, match="--workers 0"):
        server.serve([demo_index], processes=0)


@pytest.mark.parametrize("host, local", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                         ("127.0.0.2", True), ("0.0.0.0", False), ("192.0.2.1", False),
                                         ("example.org", False)])
def test_loopback_is_recognised(host: str, local: bool):
    assert guard.is_loopback(host) is local


def test_a_served_app_loads_the_gates_model_when_it_starts_not_on_the_first_question(
        demo_index: Path, monkeypatch: pytest.MonkeyPatch):
    from starlette.testclient import TestClient

    from glassrag.rerank import cross_onnx

    monkeypatch.setattr(cross_onnx, "_LOADED", {})  # this process's models, as a new worker has them

    def sessions() -> int:
        return sum(m._session is not None for m in cross_onnx._LOADED.values())

    with TestClient(server.create_app([demo_index])):  # as tests and the library make it: loaded when asked
        assert sessions() == 0
    # as `glassrag serve` makes it
    with TestClient(server.create_app([demo_index], warm=True), base_url="http://127.0.0.1") as client:
        assert sessions() == 1  # the demo's calibration reads the answerability model
        assert client.get("/ask.json", params={"q": "What does error E-4107 mean?"}).status_code == 200
        assert sessions() == 1 and len(cross_onnx._LOADED) == 1  # the question used the one loaded


def test_a_served_index_that_fails_to_warm_is_left_for_its_first_request_to_report(
        demo_index: Path, monkeypatch: pytest.MonkeyPatch):
    from starlette.testclient import TestClient

    from glassrag.web.catalog import Source

    def broken(self: Source) -> None:
        raise StoreError(f"{self.path} cannot be read", "rebuild it")

    monkeypatch.setattr(Source, "warm", broken)
    with TestClient(server.create_app([demo_index], warm=True), base_url="http://127.0.0.1") as client:
        assert client.get("/glossary.json").status_code == 200
