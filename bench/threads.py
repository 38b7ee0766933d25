"""A MiniLM question and an LSA fit on an idle and on a busy machine, with glassrag's
thread settings (glassrag/threads.py: one BLAS thread, one torch thread per question)
against the libraries' defaults (torch and OpenBLAS use every core).

    python bench/threads.py

"Busy" is one busy-loop process (`while True: pass`) started beside the measurement, on a
machine with 2 cores: what another command, a test run or a build does to a server.
Every condition runs in its own process (thread settings are per process). The demo
handbook is ingested once with --embedder minilm; each condition answers the demo's
showcase questions 20 times (a first pass, which loads the model, is not counted) and
reports the p50 and p95 of the whole ask and of the neural stage. The LSA fit is the
demo corpus's (64 dimensions), 5 times. Writes bench/results/threads.json and .md with the
load average before each condition.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
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
    for _ in range(20):
        for q in questions:
            t0 = time.perf_counter()
            answer = pipe.run(q)
            ask.append((time.perf_counter() - t0) * 1000)
            neural.extend(t.ms for t in answer.trace if t.name not in ("bm25", "lsa") and t.kind == "retrieve")
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
                      "torch_threads": torch.get_num_threads(), "questions": len(ask)}))


def main() -> None:
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
            out = subprocess.run([py, __file__, "--child", setting], capture_output=True, text=True,
                                 check=True).stdout
        finally:
            if busy:
                busy.kill()
                busy.wait()
        row = {"threads": setting, "machine": load, "load_before": before,
               **json.loads(out.strip().splitlines()[-1])}
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {"commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                       text=True).stdout.strip(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
              "packages": {p: version(p) for p in ("torch", "numpy", "scipy", "sentence-transformers")},
              "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "threads.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["# Threads: a MiniLM question and an LSA fit, idle and beside a busy-loop process", "",
             f"code {result['commit']}, {result['machine']}, "
             f"{', '.join(f'{k} {v}' for k, v in result['packages'].items())}; {result['date']}", "",
             "| threads | machine | ask p50 ms | ask p95 ms | MiniLM stage p50 ms | p95 | LSA fit p50 ms "
             "| torch threads | load before |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['threads']} | {r['machine']} | {r['ask_p50_ms']} | {r['ask_p95_ms']} | "
                     f"{r['neural_p50_ms']} | {r['neural_p95_ms']} | {r['lsa_fit_p50_ms']} | "
                     f"{r['torch_threads']} | {r['load_before']} |")
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
