"""`glassrag serve --workers 2`, a real server of two processes: a form made by one worker is
accepted by the other (one token, drawn before the fork), asks are answered, and Ctrl-C stops
every worker (a worker that dies is replaced: tests/security/test_worker_restart.py)."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import pytest

pytest.importorskip("uvicorn", reason="the web app needs the web extra: pip install 'glassrag[web]'")

import anyio  # noqa: E402

from glassrag.web import prefork  # noqa: E402
from glassrag.web.forms import Busy, GenerationQueue  # noqa: E402
from tests.web.test_web_serve import free_port  # noqa: E402

pytestmark = pytest.mark.skipif(not prefork.SPREAD, reason="workers get a socket each on Linux only")

POSTS = 12  # all on one worker by chance: 2 × 2**-12


def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return sorted(found)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def fetch(base: str, path: str, data: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(base + path, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=300) as r:  # a new connection each time
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@pytest.mark.slow
def test_two_workers_share_the_form_token_answer_asks_and_stop_on_ctrl_c(index_copy: Path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", str(index_copy),
                             "--port", str(port), "--workers", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = proc.stdout.readline()
        assert f"{base}/" in line and "2 worker processes" in line, proc.stderr.read()
        deadline = time.monotonic() + 30
        while True:
            try:
                assert fetch(base, "/glossary.json")[0] == 200
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
                time.sleep(0.1)
        workers = children_of(proc.pid)
        assert len(workers) == 2

        page = "/ask?" + urlencode({"q": "What does error E-4107 mean?"})  # its "Write an answer" form
        tokens = {re.search(rb'name="token" value="([^"]+)"', fetch(base, page)[1])[1] for _ in range(8)}
        assert len(tokens) == 1  # every worker writes the same token into its forms
        token = tokens.pop().decode()
        before = {pid: cpu_ticks(pid) for pid in workers}
        statuses = [fetch(base, "/lab/losses.json", urlencode({"k": "3", "token": token}).encode(),
                          {"Origin": base})[0] for _ in range(POSTS)]
        assert statuses == [200] * POSTS
        assert all(cpu_ticks(pid) > before[pid] for pid in workers)  # both workers took POSTs
        assert fetch(base, "/lab/losses.json", urlencode({"k": "2", "token": "guess"}).encode())[0] == 403

        status, body = fetch(base, "/ask.json?" + urlencode({"q": "What does error E-4107 mean?"}))
        assert status == 200 and json.loads(body)["question"] == "What does error E-4107 mean?"

        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole process group
        assert proc.wait(timeout=30) == 0
        assert not children_of(proc.pid) and not any(Path(f"/proc/{pid}").exists() for pid in workers)
        err = proc.stderr.read()
        assert "Traceback" not in err, err
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def test_one_generation_queue_for_all_workers():
    """The queue made before the fork is one queue: a worker's answer being written holds the
    turn and the count of every other worker."""
    queue = GenerationQueue(waiting=1)
    writing, done = multiprocessing.get_context("fork").Event(), multiprocessing.get_context("fork").Event()

    def hold() -> None:
        writing.set()
        time.sleep(1.5)
        done.set()

    other = multiprocessing.get_context("fork").Process(target=lambda: anyio.run(queue.run, hold))
    other.start()
    try:
        assert writing.wait(30)
        assert anyio.run(queue.run, done.is_set) is True  # it waited for the other worker's turn
        writing.clear()
        done.clear()
        other.join(30)
        other = multiprocessing.get_context("fork").Process(target=lambda: anyio.run(queue.run, hold))
        other.start()
        assert writing.wait(30)
        queue.waiting = 0  # one running, none may wait: the other worker's answer fills the queue
        with pytest.raises(Busy):
            anyio.run(queue.run, lambda: None)
    finally:
        other.join(30)


def test_each_worker_takes_its_share_of_a_clients_posts(index_copy: Path, monkeypatch: pytest.MonkeyPatch):
    """A client's POSTs a minute are bounded by the server, not by each worker: with 2 workers,
    each takes half of PER_MINUTE."""
    from starlette.testclient import TestClient

    from glassrag.web import forms
    from glassrag.web.server import create_app
    from tests.web.conftest import BASE_URL

    monkeypatch.setattr(forms, "PER_MINUTE", 4)
    client = TestClient(create_app([index_copy], processes=2), base_url=BASE_URL)
    page = client.get("/ask?" + urlencode({"q": "What does error E-4107 mean?"})).text
    token = re.search(r'name="token" value="([^"]+)"', page)[1]
    statuses = [client.post("/lab/losses.json", data={"k": "3", "token": token}).status_code for _ in range(3)]
    assert statuses == [200, 200, 429]  # 4 // 2 = 2 in this worker
