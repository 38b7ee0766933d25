"""Shared by the benchmarks: SciFact loading, BEIR conventions, metrics, timing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from glassrag.evaluate.metrics import evaluate_run, mean_of

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "bench" / "scifact"
# GLASSRAG_BENCH_RESULTS: another folder (scripts/bench_check.py writes there and compares)
RESULTS = Path(os.environ.get("GLASSRAG_BENCH_RESULTS") or ROOT / "bench" / "results")

# published numbers, from ../shared/bench/README.md (test split)
PUBLISHED = {
    "BM25 BEIR paper (Elasticsearch)": {"ndcg@10": 0.665},
    "BM25 flat Pyserini (k1=0.9, b=0.4)": {"ndcg@10": 0.6789, "recall@100": 0.9253},
    "all-MiniLM-L6-v2 dense (MTEB)": {"ndcg@10": 0.6451, "recall@100": 0.925},
    "bge-small-en-v1.5 dense (MTEB)": {"ndcg@10": 0.7127, "recall@100": 0.945},
}


def load_scifact(split: str) -> tuple[list[str], list[str], list[str], list[str], dict[str, dict[str, int]]]:
    """(doc ids, doc texts as title + " " + text, query ids, query texts, qrels) for a split."""
    docs = [json.loads(l) for l in (SCIFACT / "corpus.jsonl").read_text().splitlines() if l.strip()]
    queries = {}
    for l in (SCIFACT / "queries.jsonl").read_text().splitlines():
        if l.strip():
            q = json.loads(l)
            queries[q["_id"]] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    for line in (SCIFACT / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
        cells = line.strip().split("\t")
        if len(cells) == 3:
            qrels.setdefault(cells[0], {})[cells[1]] = int(cells[2])
    qids = sorted(qrels, key=lambda q: int(q) if q.isdigit() else q)
    return ([d["_id"] for d in docs], [f"{d['title']} {d['text']}" for d in docs],
            qids, [queries[q] for q in qids], qrels)


def drop_self(run: dict[str, list[str]]) -> dict[str, list[str]]:
    """BEIR convention: a hit whose id equals the query id does not count."""
    return {q: [d for d in ranked if d != q] for q, ranked in run.items()}


def scores(run: dict[str, list[str]], qrels: dict[str, dict[str, int]],
           names: Sequence[str] = ("ndcg@10", "recall@100", "mrr@10")) -> dict[str, float]:
    per = evaluate_run(drop_self(run), qrels, list(names))
    return {n: mean_of(v) for n, v in per.items()}


def best_of(fn: Callable[[], object], repeats: int = 3) -> tuple[float, object]:
    """Shortest wall time of `repeats` calls (the least disturbed by other work) and the result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def save(name: str, data: dict, seeds: dict[str, int] | None = None) -> Path:
    """The result as bench/results/NAME.json, with where it came from: code version,
    package versions, machine and seeds (glassrag/provenance.py)."""
    from glassrag.provenance import provenance

    data = {**data, "provenance": provenance(seeds or {"lsa.seed": 0})}
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def _ancestors() -> set[int]:
    """This process and every process above it (the shell that started it names the same
    pattern on its command line, and must not be stopped)."""
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


@contextmanager
def paused(pattern: str | None) -> Iterator[list[int]]:
    """Processes whose command line matches `pattern` (as `pgrep -f`) stopped with SIGSTOP
    for the duration and always continued with SIGCONT after: background work sharing the
    machine (another engineer's mutation tests: `--pause mutmut`) kept out of a timing.
    Yields the stopped pids; with no pattern, stops nothing."""
    pids: list[int] = []
    if pattern:
        found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
        mine = _ancestors()
        pids = [int(p) for p in found if int(p) not in mine]
    stopped = []
    try:
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            except ProcessLookupError:
                pass
        yield stopped
    finally:
        for pid in stopped:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass


class RunQueue:
    """The mean number of runnable threads on the machine (`procs_running` of /proc/stat,
    ten samples a second) while it is open: what competes for the cores right now, where the
    load average still remembers the last minutes. Our own running thread counts as one."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            for line in Path("/proc/stat").read_text().splitlines():
                if line.startswith("procs_running"):
                    self.samples.append(int(line.split()[1]))
            self._stop.wait(0.1)

    def __enter__(self) -> "RunQueue":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def mean(self) -> float:
        return round(sum(self.samples) / len(self.samples), 2) if self.samples else float("nan")
