"""`glassrag serve --ray` over a sharded index, through the real HTTP server on loopback: the ask
page and /ask.json answer from the shards with the usual route and trace (BM25 and MiniLM
searched on the local 3-node cluster, fused on the server); a cluster that cannot be reached is a
503 that names it, on the page and in the JSON."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("uvicorn", reason="the web app needs the web extra: pip install 'glassrag[web]'")

from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.store import EmbeddedStore  # noqa: E402

QUESTION = "What does error E-4107 mean on the vacuum?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serving(index: Path, *flags: str) -> Iterator[str]:
    """`glassrag serve --index INDEX FLAGS` in a new process group on a free loopback port,
    without the variables Ray set in this process; yields its base URL once it answers, and
    ends the group after."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "GLASSRAG_RAY"}
    proc = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", str(index), "--port", str(port),
                             "--workers", "1", *flags], env={**env, "HF_HUB_OFFLINE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/glossary.json", timeout=5):
                    break
            except OSError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                assert time.monotonic() < deadline, "the server did not answer within 120 s"
                time.sleep(0.2)
        yield base
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn's own shutdown: the server's Ray driver disconnects
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=240) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def test_serve_answers_from_the_shards_with_the_usual_route(cluster, demo_dense_shards):
    """/ask.json: the single index's passages, a trace whose retrievers ran on the shards (with
    the in-process retrievers' hits) and a route through them; the ask page: 200, the same route
    drawn and the BM25 term table filled (the driver explains ray-bm25's chunks)."""
    single = EmbeddedStore(demo_dense_shards[0]).read()
    want = Pipeline(single).run(QUESTION)
    q = urllib.parse.quote(QUESTION)
    with serving(demo_dense_shards[1], "--ray", cluster.address) as base:
        status, body = get(f"{base}/ask.json?q={q}")
        assert status == 200, body[:2000]
        page = json.loads(body)
        status, html = get(f"{base}/ask?q={q}")
    answer = page["answer"]
    assert answer["passage"]["chunk_id"] == want.passage.chunk_id
    assert [p["chunk_id"] for p in answer["also_found"]] == [p.chunk_id for p in want.also_found]
    trace = {t["name"]: t for t in answer["trace"]}
    local = {t.name: t for t in want.trace}
    for sharded, name in (("ray-bm25", "bm25"), ("ray-minilm", "minilm")):
        assert [h["chunk_id"] for h in trace[sharded]["hits"]] == [h.chunk_id for h in local[name].hits]
        assert trace[sharded]["params"]["served_by"] == "ray" and trace[sharded]["params"]["shards"] == 3
    assert {"ray-bm25", "ray-minilm"} <= {s["name"] for s in page["stages"]}
    assert {n["column"] for c in page["route"]["chunks"] for n in c["nodes"]} >= {"ray-bm25", "ray-minilm"}
    assert page["bm25_terms"].get("rows"), page["bm25_terms"]
    assert status == 200 and "ray-minilm" in html and "ray-bm25" in html and "shards searched on Ray" in html


def test_serve_with_an_unreachable_cluster_answers_503_naming_it(demo_shards):
    """The server starts (the cluster is reached at the first question); the question is a 503
    whose problem names the address, on the page and in the JSON, and no answer."""
    q = urllib.parse.quote("What does E-4107 mean?")
    with serving(demo_shards[1], "--ray", "127.0.0.1:9") as base:
        status, body = get(f"{base}/ask.json?q={q}")
        assert status == 503, body[:2000]
        error = json.loads(body)
        assert "cannot reach the Ray cluster at 127.0.0.1:9" in error["error"] and "--ray" in error["hint"]
        status, html = get(f"{base}/ask?q={q}")
        assert status == 503 and "cannot reach the Ray cluster at 127.0.0.1:9" in html
