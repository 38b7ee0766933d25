"""Ctrl-C stops `glassrag serve`, run as `make demo` runs it (issue 49, item 10: Ctrl-C left the
server running). A terminal's Ctrl-C is SIGINT to the whole foreground process group: make,
the server and its workers. uvicorn, as the server ran it, then waited without end for the
requests in flight (a stalled client kept the port and the processes) and for the warm-up of
every index before it looked at the signal; now a request has GRACE_S seconds."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the web app needs the web extra: pip install 'glassrag[web]'")

from glassrag.store import EmbeddedStore  # noqa: E402
from glassrag.web import prefork  # noqa: E402
from tests.web.test_web_serve import free_port  # noqa: E402


def group_alive(pgid: int) -> list[int]:
    """The processes of a process group that still run (zombies are done)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def started(port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/glossary.json", timeout=30) as r:
                assert r.status == 200
                return
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
            time.sleep(0.2)


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_ctrl_c_on_make_stops_the_server_with_a_request_in_flight(index, tmp_path: Path, workers: str):
    if workers == "2" and not prefork.SPREAD:
        pytest.skip("workers get a socket each on Linux only")
    folder = tmp_path / "index"
    EmbeddedStore(folder).write(index)
    port = free_port()
    serve = [sys.executable, "-m", "glassrag.cli", "serve", "--index", str(folder), "--port", str(port),
             "--workers", workers]
    # the demo target's last line, as the Makefile writes it
    (tmp_path / "Makefile").write_text("demo:\n\texec " + " ".join(serve) + "\n")
    proc = subprocess.Popen(["make", "-s", "-f", str(tmp_path / "Makefile"), "demo"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, cwd=tmp_path)
    stalled = socket.socket()
    try:
        started(port, proc)
        # a client that sends half of a form and stalls: its request stays in flight
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(f"POST /lab/losses.json HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                        "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nk=3".encode())
        time.sleep(1.0)
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal
        deadline = time.monotonic() + prefork.GRACE_S + 20
        while group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not group_alive(proc.pid), "still running after Ctrl-C"
        proc.wait(timeout=10)
        assert "Traceback" not in proc.stderr.read()
    finally:
        stalled.close()
        if group_alive(proc.pid):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def test_a_signal_while_starting_stops_the_server_at_once():
    """uvicorn looks at a signal only once its lifespan (the warm-up of every index) is done;
    the server leaves at once instead: nothing is served yet."""
    script = ("import asyncio, os, signal, time\n"
              "from contextlib import asynccontextmanager\n"
              "from starlette.applications import Starlette\n"
              "from glassrag.web import prefork\n"
              "@asynccontextmanager\n"
              "async def lifespan(app):\n"
              "    os.kill(os.getpid(), signal.SIGINT)\n"
              "    await asyncio.sleep(60)  # a warm-up of a minute\n"
              "    yield\n"
              f"prefork.server(Starlette(lifespan=lifespan), host='127.0.0.1', port={free_port()}).run()\n")
    begun = time.monotonic()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert time.monotonic() - begun < 30
    assert done.returncode == 128 + signal.SIGINT and "stopped while starting" in done.stderr
