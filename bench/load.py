"""Load on `glassrag serve`: 200 questions at once, mixed, against a real server on 127.0.0.1.

Builds the demo index in a temporary folder, starts `glassrag serve` on a free port, then
sends every request at the same moment from 200 client threads:

- simple: the demo's golden questions, as a user types them;
- heavy: 4,000-character questions of repeated identifiers (the audit's starving load);
- settings: simple questions with one of 12 settings combinations (bm25.k1 × bm25.b ×
  answer.k), each a pipeline the server has not built yet when the load begins.

Reports, per kind and overall, latency p50/p95/p99 (seconds, from sending to the last byte)
and errors (anything but HTTP 200); then, with the server stopped, the same questions asked
in-process (`Pipeline.run`, one after another, after the same one-question warm-up the server
had) and the ask pages built in-process (the page's data and its JSON twin, an empty answer
cache), and the ratio of the server's time per request (wall time of the burst / requests) to
the in-process ask time: what serving adds to answering. Writes bench/results/load.json and .md.

    python bench/load.py                 # 200 requests: 120 simple, 40 heavy, 40 settings
    python bench/load.py --requests 50   # a quick look
    python bench/load.py --workers 1     # the server in one process (default: serve's default)
    python bench/load.py --index .glassrag/demo   # a built index instead: `make demo`'s, whose gate is
                                                  # calibrated and reads the cross-encoder (load_index.md)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlencode

import numpy as np

WARM = "What does error E-4107 mean?"  # the one question asked before the burst (and in-process)
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
SETTINGS = [{"bm25.k1": k1, "bm25.b": b, "answer.k": k}
            for k1, b, k in itertools.product(("0.6", "0.9", "1.5"), ("0.3", "0.75"), ("3", "8"))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def heavy_question(i: int) -> str:
    return " ".join(f"E-{4100 + (i + j) % 300} TX-{2000 + j % 50}" for j in range(400))[:4000]


def requests_for(n: int) -> list[tuple[str, str]]:
    """(kind, path) for n requests: 60 % simple, 20 % heavy, 20 % settings."""
    from glassrag.demo import demo_golden
    from glassrag.evaluate.golden import load_golden

    questions = [q.question for q in load_golden(demo_golden())]
    out = []
    for i in range(n):
        q = questions[i % len(questions)]
        if i % 5 == 1:
            out.append(("heavy", "/ask.json?" + urlencode({"q": heavy_question(i)})))
        elif i % 5 == 3:
            out.append(("settings", "/ask.json?" + urlencode({"q": q, **SETTINGS[i % len(SETTINGS)]})))
        else:
            out.append(("simple", "/ask.json?" + urlencode({"q": q})))
    return out


def fire(base: str, plan: list[tuple[str, str]], timeout: float) -> list[dict]:
    """Every request from its own thread, released together by a barrier."""
    results: list[dict] = [{} for _ in plan]
    barrier = threading.Barrier(len(plan))

    def one(i: int, kind: str, path: str) -> None:
        barrier.wait()
        t0 = time.perf_counter()
        status: int | str
        try:
            with urllib.request.urlopen(base + path, timeout=timeout) as r:
                body = r.read()
                status = r.status
        except urllib.error.HTTPError as e:
            status, body = e.code, b""
        except OSError as e:
            status, body = type(e).__name__, b""
        results[i] = {"kind": kind, "status": status, "seconds": time.perf_counter() - t0,
                      "bytes": len(body)}

    threads = [threading.Thread(target=one, args=(i, k, p)) for i, (k, p) in enumerate(plan)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def summary(rows: list[dict]) -> dict:
    ok = [r["seconds"] for r in rows if r["status"] == 200]
    p = np.percentile(ok, [50, 95, 99]) if ok else [float("nan")] * 3
    return {"requests": len(rows), "errors": sum(r["status"] != 200 for r in rows),
            "p50": round(float(p[0]), 3), "p95": round(float(p[1]), 3), "p99": round(float(p[2]), 3),
            "max": round(max(ok), 3) if ok else None}


def in_process(index: Path, plan: list[tuple[str, str]], warm: str) -> dict:
    """Milliseconds per request of the plan's asks in this process (`Pipeline.run`, settings
    parsed as the server parses them), then of its ask pages (data and JSON twin, a new source:
    nothing kept); each pass after one warm-up question, as the server had."""
    from urllib.parse import parse_qsl, urlsplit

    from glassrag.web.ask import AskView
    from glassrag.web.catalog import Source

    params = [{**dict(parse_qsl(urlsplit(path).query)), "generate.enabled": "false"} for _, path in plan]
    warmup = {"q": warm, "generate.enabled": "false"}
    source = Source(index.name, index)
    view = AskView(source, warmup)
    source.pipeline(view.config).run(view.question)
    ask_ms = []
    for p in params:
        view = AskView(source, p)
        pipeline = source.pipeline(view.config)
        t0 = time.perf_counter()
        pipeline.run(view.question)
        ask_ms.append((time.perf_counter() - t0) * 1000)
    source = Source(index.name, index)
    AskView(source, warmup).body()
    page_ms = []
    for p in params:
        t0 = time.perf_counter()
        AskView(source, p).body()
        page_ms.append((time.perf_counter() - t0) * 1000)
    return {"ask_ms_mean": round(float(np.mean(ask_ms)), 3), "ask_ms_p50": round(float(np.median(ask_ms)), 3),
            "page_ms_mean": round(float(np.mean(page_ms)), 3), "page_ms_p50": round(float(np.median(page_ms)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--workers", type=int, help="glassrag serve --workers (default: serve's default)")
    parser.add_argument("--index", type=Path, help="serve this built index (default: the demo documents "
                        "ingested with no calibration and no trained reranker, in a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="glassrag-load-") as tmp:
        from glassrag.demo import demo_docs

        index = args.index or Path(tmp) / "demo"
        if args.index is None:
            subprocess.run([sys.executable, "-m", "glassrag.cli", "ingest", str(demo_docs()), "--index",
                            str(index)], check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        workers = [] if args.workers is None else ["--workers", str(args.workers)]
        server = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "serve", "--index", str(index),
                                   "--port", str(port), *workers], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        base = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/glossary.json", timeout=2).read()
                    break
                except OSError:
                    time.sleep(0.1)
            alone = fire(base, [("simple alone", "/ask.json?" + urlencode({"q": WARM}))] * 1, args.timeout)
            load_before = os.getloadavg()
            plan = requests_for(args.requests)
            t0 = time.perf_counter()
            rows = fire(base, plan, args.timeout)
            wall = time.perf_counter() - t0
            load_after = os.getloadavg()
        finally:
            server.terminate()
            server.wait(timeout=30)
        inside = in_process(index, plan, WARM)
    server_ms = wall * 1000 / args.requests
    kinds = sorted({r["kind"] for r in rows})
    import glassrag.web.server as server_module

    pool = getattr(server_module, "WORKERS", "anyio's default 40 threads (before issue 13)")
    processes = args.workers if args.workers is not None else getattr(server_module, "PROCESSES", 1)

    result = {
        "what": f"{args.requests} concurrent /ask.json requests against glassrag serve on 127.0.0.1 "
                f"({'the demo documents ingested, uncalibrated' if args.index is None else args.index}; "
                f"{processes} server process{'es' if processes > 1 else ''}, each with a "
                f"worker pool of {pool})",
        "server_processes": processes,
        "code": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True).stdout.strip(),
        "python": platform.python_version(),
        "packages": {p: version(p) for p in ("glassrag", "starlette", "uvicorn", "anyio", "numpy")},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
        "simple_question_alone_seconds": round(alone[0]["seconds"], 3),
        "wall_seconds": round(wall, 2),
        "load_average_1min": [round(load_before[0], 2), round(load_after[0], 2)],
        "server_ms_per_request": round(server_ms, 3),
        "in_process": inside,
        "server_per_request_over_in_process_ask": round(server_ms / inside["ask_ms_mean"], 2),
        "server_per_request_over_in_process_page": round(server_ms / inside["page_ms_mean"], 2),
        "overall": summary(rows),
        "by_kind": {k: summary([r for r in rows if r["kind"] == k]) for k in kinds},
        "statuses": sorted({str(r["status"]) for r in rows}),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = os.environ.get("GLASSRAG_LOAD_RESULT", "load" if args.index is None else "load_index")
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| requests | kind | errors | p50 s | p95 s | p99 s | max s |", "|---:|---|---:|---:|---:|---:|---:|"]
    for kind, s in [("all", result["overall"]), *result["by_kind"].items()]:
        lines.append(f"| {s['requests']} | {kind} | {s['errors']} | {s['p50']} | {s['p95']} | {s['p99']} | {s['max']} |")
    text = (f"{result['what']}; code {result['code']}, Python {result['python']}, "
            + ", ".join(f"{k} {v}" for k, v in result["packages"].items())
            + f"\n\nA simple question alone: {result['simple_question_alone_seconds']} s. "
              f"All {args.requests} requests done in {result['wall_seconds']} s (1-minute load average "
              f"{result['load_average_1min'][0]} before, {result['load_average_1min'][1]} after, on "
              f"{os.cpu_count()} cores).\n\n" + "\n".join(lines) + "\n\n"
            + "| server ms per request (wall / requests) | in-process ask ms (mean, p50) | in-process page ms "
              "(mean, p50) | server / ask | server / page |\n|---:|---:|---:|---:|---:|\n"
            + f"| {result['server_ms_per_request']} | {inside['ask_ms_mean']}, {inside['ask_ms_p50']} | "
              f"{inside['page_ms_mean']}, {inside['page_ms_p50']} | "
              f"{result['server_per_request_over_in_process_ask']} | "
              f"{result['server_per_request_over_in_process_page']} |\n")
    (RESULTS / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
