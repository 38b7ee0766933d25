"""A MiniLM question and an LSA fit on an idle and on a busy machine, with glassrag's
thread settings (glassrag/threads.py: one BLAS thread, one torch thread per question)
against the libraries' defaults (torch and OpenBLAS use every core).

    python bench/threads.py
    python bench/threads.py --pause mutmut   # other work on the machine stopped while it runs

"Busy" is one busy-loop process (`while True: pass`) started beside the measurement, on a
machine with 2 cores: what another command, a test run or a build does to a server.
Every condition runs in its own process (thread settings are per process). The demo
handbook is ingested once with --embedder minilm; each condition answers the demo's
showcase questions 20 times (a first pass, which loads the model, is not counted) and
reports the p50 and p95 of the whole ask and of the neural stage, the cores an ask keeps
busy (this process's CPU time over the wall time of the asks) and the threads that used CPU
(Python's and native ones: BLAS, OpenMP, tokenizers). The LSA fit is the demo corpus's (64
dimensions), 5 times. Writes bench/results/threads.json and .md with the load average before
each condition and the mean run queue during it (runnable threads on the machine, the
measurement and the busy loop included: on 2 cores, 2 means nothing waits).

`--pause PATTERN` stops the processes whose command line matches PATTERN (SIGSTOP) for the
whole run and continues them after (SIGCONT, also on failure): on a shared machine,
an "idle" baseline is otherwise whatever the others run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # bench/common.py
RESULTS = ROOT / "bench" / "results"
WORK = Path(os.environ.get("GLASSRAG_THREADS_DIR", "/tmp/glassrag-threads"))
CONDITIONS = [("glassrag", "idle"), ("glassrag", "busy"), ("default", "idle"), ("default", "busy")]


def child(setting: str) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    from glassrag import threads

    if setting == "default":  # the libraries' own thread counts: nothing limited
        threads.configure = lambda: None  # type: ignore[assignment]
        threads.torch_threads = lambda n: None  # type: ignore[assignment]
    from glassrag.demo import demo_questions
    from glassrag.dense.lsa import LSA
    from glassrag.pipeline import Pipeline
    from glassrag.store import EmbeddedStore

    index = EmbeddedStore(WORK / "idx").read()
    pipe = Pipeline(index)
    questions = demo_questions()
    for q in questions:  # loads the model
        pipe.run(q)
    ask, neural = [], []
    before, cpu0, wall0 = task_cpu(), time.process_time(), time.perf_counter()
    for _ in range(20):
        for q in questions:
            t0 = time.perf_counter()
            answer = pipe.run(q)
            ask.append((time.perf_counter() - t0) * 1000)
            neural.extend(t.ms for t in answer.trace if t.name not in ("bm25", "lsa") and t.kind == "retrieve")
    cores = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    after = task_cpu()
    used = {t: round(after[t][1] - before.get(t, (None, 0.0))[1], 3) for t in after}
    python_threads = {t.native_id: t.name for t in threading.enumerate()}
    busy_threads = sorted((python_threads.get(t, f"native {after[t][0]}"), s) for t, s in used.items() if s > 0)
    fits = []
    for _ in range(5):
        t0 = time.perf_counter()
        LSA(64, 4, 0).fit(index.counts)
        fits.append((time.perf_counter() - t0) * 1000)
    import torch

    print(json.dumps({"ask_p50_ms": round(float(np.median(ask)), 2),
                      "ask_p95_ms": round(float(np.percentile(ask, 95)), 2),
                      "neural_p50_ms": round(float(np.median(neural)), 2),
                      "neural_p95_ms": round(float(np.percentile(neural, 95)), 2),
                      "lsa_fit_p50_ms": round(float(np.median(fits)), 2),
                      "cores_per_ask": round(cores, 2), "threads_using_cpu": busy_threads,
                      "torch_threads": torch.get_num_threads(),
                      "torch_interop_threads": torch.get_num_interop_threads(), "questions": len(ask)}))


def task_cpu() -> dict[int, tuple[str, float]]:
    """thread id -> (name, CPU seconds) for every thread of this process."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def main() -> None:
    from common import paused  # in the parent only

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pause", help="stop processes matching this pattern (pgrep -f) during the run")
    args = parser.parse_args()
    with paused(args.pause) as stopped:
        run(stopped, args.pause)


def run(stopped: list[int], pattern: str | None) -> None:
    from common import RunQueue

    py = sys.executable
    if not (WORK / "idx" / "CURRENT").is_file():
        from glassrag.demo import demo_docs

        WORK.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(Path(py).parent / "glassrag"), "ingest", str(demo_docs()), "--index",
                        str(WORK / "idx"), "--embedder", "minilm"], check=True,
                       env={**os.environ, "HF_HUB_OFFLINE": "1"}, capture_output=True)
    rows = []
    for setting, load in CONDITIONS:
        busy = subprocess.Popen([py, "-c", "while True: pass"]) if load == "busy" else None
        try:
            time.sleep(1.0 if busy else 0)
            before = [round(x, 2) for x in os.getloadavg()]
            with RunQueue() as queue:
                out = subprocess.run([py, __file__, "--child", setting], capture_output=True, text=True,
                                     check=True).stdout
        finally:
            if busy:
                busy.kill()
                busy.wait()
        row = {"threads": setting, "machine": load, "load_before": before, "run_queue": queue.mean(),
               **json.loads(out.strip().splitlines()[-1])}
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                       text=True).stdout.strip(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "packages": {p: version(p) for p in ("torch", "numpy", "scipy", "sentence-transformers")},
              "paused": {"pattern": pattern, "processes": len(stopped)}, "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "threads.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["# Threads: a MiniLM question and an LSA fit, idle and beside a busy-loop process", "",
             f"code {result['commit']}, {result['machine']}, "
             f"{', '.join(f'{k} {v}' for k, v in result['packages'].items())}; {result['date']}", "",
             f"Paused during the run: {len(stopped)} process(es) matching {pattern!r}." if pattern
             else "Nothing paused: other work on the machine ran alongside.", "",
             "| threads | machine | ask p50 ms | ask p95 ms | MiniLM stage p50 ms | p95 | LSA fit p50 ms "
             "| cores per ask | torch threads (intra/inter-op) | run queue | load before |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['threads']} | {r['machine']} | {r['ask_p50_ms']} | {r['ask_p95_ms']} | "
                     f"{r['neural_p50_ms']} | {r['neural_p95_ms']} | {r['lsa_fit_p50_ms']} | "
                     f"{r['cores_per_ask']} | {r['torch_threads']}/{r['torch_interop_threads']} | "
                     f"{r['run_queue']} | {r['load_before']} |")
    lines += ["", "Threads that used CPU during the asks (CPU seconds):", ""]
    for r in rows:
        lines.append(f"- {r['threads']}, {r['machine']}: " + ", ".join(
            f"{name} {secs}" for name, secs in r["threads_using_cpu"]))
    by = {(r["threads"], r["machine"]): r for r in rows}
    for s in ("glassrag", "default"):
        if (s, "idle") in by and (s, "busy") in by:
            lines.append(f"\n{s}: busy/idle ask p50 = "
                         f"{by[(s, 'busy')]['ask_p50_ms'] / by[(s, 'idle')]['ask_p50_ms']:.2f}×")
    (RESULTS / "threads.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
