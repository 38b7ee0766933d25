"""`glassrag serve`: the URL it prints, the loopback default, the warning for another host,
a port already taken."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
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
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: started.update(app=app, **kw))
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
