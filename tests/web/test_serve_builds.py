"""`glassrag serve --build NAME`: the server serves what is built at once and builds a prepared
corpus beside it, serving it once built (issue 49, item 4: `make demo` serves the demo first);
stopping the server stops the build. Run as a user runs it, in a folder that plays the checkout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the web app needs the web extra: pip install 'glassrag[web]'")

from glassrag.store import EmbeddedStore  # noqa: E402
from tests.test_corpus_command import prepared  # noqa: E402
from tests.web.test_serve_signals import group_alive  # noqa: E402
from tests.web.test_web_serve import free_port  # noqa: E402



def test_a_catalog_serves_a_pending_index_once_its_build_saved_a_run(index, tmp_path: Path):
    """A corpus being built is listed as such on the front page, and served from the first request
    after its build saved its run (web/catalog.py), not before."""
    from glassrag.web.catalog import Catalog
    from glassrag.web.home import home_view

    EmbeddedStore(tmp_path / "served").write(index)
    folder = tmp_path / "tea"
    catalog = Catalog([tmp_path / "served"], [folder])
    assert catalog.names == ["served"] and list(catalog.pending) == ["tea"]
    assert home_view(catalog, "served")["building"] == [{"index": "tea", "path": str(folder)}]
    EmbeddedStore(folder).write(index)
    assert catalog.names == ["served"]  # an index, but no saved run yet: its build is still going
    (folder / "runs").mkdir()
    (folder / "runs" / "defaults-test.json").write_text("{}")
    assert catalog.names == ["served", "tea"] and not catalog.pending
    assert home_view(catalog, "served")["building"] == []
    # a folder already built when the server starts is served at once
    assert Catalog([tmp_path / "served"], [folder]).names == ["served", "tea"]


def front(port: int) -> dict | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/.json", timeout=30) as r:
            return json.load(r)
    except OSError:
        return None


def serving(index, tmp_path: Path) -> tuple[subprocess.Popen, int]:
    """`glassrag serve --index demo --build tea` in tmp_path (a checkout with corpora/tea), in a
    process group of its own, once its front page answers; the tea corpus is not built yet."""
    prepared(tmp_path, "tea")
    EmbeddedStore(tmp_path / "served").write(index)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", "served", "--build", "tea",
                             "--port", str(port), "--workers", "1"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while front(port) is None:
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    return proc, port


def stopped(proc: subprocess.Popen, wait_s: float = 30) -> bool:
    deadline = time.monotonic() + wait_s
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not group_alive(proc.pid)


@pytest.mark.slow
def test_the_server_answers_first_and_serves_the_corpus_once_built(index, tmp_path: Path):
    proc, port = serving(index, tmp_path)
    try:
        first = front(port)
        # served at once; the corpus listed as being built, its index not yet served
        assert [c["index"] for c in first["corpora"]] == ["served"]
        assert [b["index"] for b in first["building"]] == ["tea"]
        deadline = time.monotonic() + 500
        while True:
            data = front(port)
            if data and not data["building"]:
                break
            assert time.monotonic() < deadline, (tmp_path / ".glassrag/corpora/build.log").read_text()
            time.sleep(1)
        tea = next(c for c in data["corpora"] if c["index"] == "tea")
        assert tea["documents"] == 4 and tea["run"] is not None  # its headline run, saved by the build
        log = (tmp_path / ".glassrag" / "corpora" / "build.log").read_text(encoding="utf-8")
        assert "4. evaluate" in log and "run written to" in log
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        assert stopped(proc)
    out = proc.stdout.read()
    assert "building tea in the background" in out and ".glassrag/corpora/build.log" in out


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm to the server"])
def test_stopping_the_server_stops_the_build(index, tmp_path: Path, how: str):
    proc, port = serving(index, tmp_path)
    builds = [pid for pid in group_alive(proc.pid) if pid != proc.pid]
    assert builds, "no build running beside the server"
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole foreground group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # the server alone: it stops the build on its way out
    assert stopped(proc), f"left running: {group_alive(proc.pid)}"
