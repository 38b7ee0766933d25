"""The lab keeps every run a user saves, however many are saved at once: keep_run
(lab/losses.py) rewrites INDEX/lab/runs.json under a lock, so runs kept at the same moment by
two `serve --workers` processes, or two threads of one, are all there afterwards."""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path

from glassrag.indexer import build_index
from glassrag.config import Config
from glassrag.lab.base import LabBench
from glassrag.lab.losses import keep_run, read_runs

PER_WORKER = 8  # 5 workers × 8 = 40 runs, fewer than the KEPT = 50 a file keeps


def _bench(corpus: Path, folder: Path) -> LabBench:
    index, _ = build_index([corpus], Config().with_overrides(retrieve={"retrievers": ["bm25"]}))
    return LabBench("runs", index, (), "", folder)


def _keep_many(bench: LabBench, worker: int) -> None:
    for n in range(PER_WORKER):
        assert keep_run(bench, {"id": f"w{worker}-{n}", "outcomes": {}}) == ""


def test_runs_kept_at_once_by_processes_and_threads_are_all_kept(corpus: Path, tmp_path: Path):
    bench = _bench(corpus, tmp_path)
    fork = multiprocessing.get_context("fork")
    processes = [fork.Process(target=_keep_many, args=(bench, w)) for w in range(3)]
    threads = [threading.Thread(target=_keep_many, args=(bench, w)) for w in range(3, 5)]
    for p in processes:
        p.start()
    for t in threads:
        t.start()
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    for t in threads:
        t.join(60)
    ids = {r["id"] for r in read_runs(bench)}
    assert ids == {f"w{w}-{n}" for w in range(5) for n in range(PER_WORKER)}
    assert not list((tmp_path / "lab").glob(".runs.*.tmp"))  # no temporary file left behind


def test_the_lab_memo_holds_at_most_memo_kept_entries(corpus: Path, tmp_path: Path, monkeypatch):
    # as the workbench's caches: full at MEMO_KEPT entries, then forgotten, so it never holds more
    import glassrag.lab.base as base

    monkeypatch.setattr(base, "MEMO_KEPT", 3)
    bench = _bench(corpus, tmp_path)
    sizes = []
    for n in range(10):
        assert bench.remember(["key", n], lambda: n) == n
        sizes.append(len(bench.memo))
    assert max(sizes) == 3 and sizes[:3] == [1, 2, 3] and sizes[3] == 1
