"""`glassrag sweep` of a 5 × 5 BM25 k1 × b grid on the demo's train split, with the stage
cache and without it, in one run.

    python bench/sweep.py                 (writes bench/results/sweep.json and sweep.md)
    python bench/sweep.py --index DIR     (an existing demo index: glassrag demo --index DIR)

The demo index is built first, as `glassrag demo` builds it (the reranker trained and the
gate calibrated on the train split); its building is not timed ("after the index exists").
Then the same sweep runs twice, each with the process-wide kept draws and sentence spans
emptied first: cached (one stage cache and the index's chunks kept, shared by the 25
configurations) and uncached (each configuration calibrated and evaluated on its own, as
`glassrag calibrate` and `glassrag eval` would). Both choose the best configuration on train
and evaluate it on test once. Wall and CPU seconds are recorded with the load average: the
machine is shared with other benchmarks, so wall time depends on what else runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.grid import from_flags
from glassrag.evaluate.sweep import run_sweep
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.indexer import build_index
from glassrag.provenance import provenance
from glassrag.store import EmbeddedStore

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from common import RESULTS, save  # noqa: E402

GRID = ["bm25.k1=0.6,0.9,1.2,1.5,2.0", "bm25.b=0.3,0.4,0.5,0.75,0.9"]


def demo_index(folder: Path) -> None:
    config = Config()
    index, _ = build_index([demo_docs()], config)
    questions = load_golden(demo_golden())
    index.extra["reranker"] = train_reranker(index, config, questions, str(demo_golden()))
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions, "cost",
                                                                 str(demo_golden()))
    EmbeddedStore(folder).write(index)


def forget() -> None:
    """Empty what the process keeps between evaluations, so neither run inherits the other's."""
    from glassrag.stats import _draws
    from glassrag.stats import drawn_counts
    from glassrag.present.excerpt import sentences

    for kept in (_draws, drawn_counts, sentences):
        kept.cache_clear()


def timed(index: Path, caching: bool) -> dict[str, Any]:
    forget()
    load, wall, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
    sweep = run_sweep(index, demo_golden(), from_flags(GRID), caching=caching)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    data = sweep.to_dict()
    return {"wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3), "load_before": round(load, 2),
            "load_after": round(os.getloadavg()[0], 2), "timing": data["timing"],
            "best": data["best"], "test": data["test"],
            "metric": {c["name"]: c["metric"] for c in data["configs"]},
            "runs": {c.name: c.run.flat_metrics() for c in sweep.configs}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, help="an existing demo index (default: build one in a temporary folder)")
    parser.add_argument("--repeats", type=int, default=1,
                        help="run cached and uncached this many times, alternating, and keep each one's "
                             "shortest wall time (the least disturbed by other work; default 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="glassrag-bench-sweep-") as tmp:
        index = args.index
        if index is None:
            index = Path(tmp) / "demo"
            t0 = time.perf_counter()
            demo_index(index)
            print(f"demo index built in {time.perf_counter() - t0:.1f} s (not part of the timing)")
        tries: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
        for _ in range(args.repeats):
            for caching in (True, False):
                got = timed(index, caching)
                tries[caching].append(got)
                print(f"{'cached' if caching else 'uncached':9} {got['wall_seconds']:.1f} s wall, "
                      f"{got['cpu_seconds']:.1f} s CPU (load {got['load_before']})")
        cached, uncached = (min(tries[c], key=lambda t: t["wall_seconds"]) for c in (True, False))
    same = cached.pop("runs") == uncached.pop("runs")
    result = {
        "grid": GRID, "split": "train", "configurations": 25, "metric": "ranking mrr@10",
        "repeats": args.repeats, "all_wall_seconds": {"cached": [t["wall_seconds"] for t in tries[True]],
                                                      "uncached": [t["wall_seconds"] for t in tries[False]]},
        "cached": cached, "uncached": {k: uncached[k] for k in ("wall_seconds", "cpu_seconds", "load_before",
                                                                  "load_after", "timing", "best", "test")},
        "same_figures": same, "same_choice": cached["best"]["name"] == uncached["best"]["name"],
        "speedup_wall": round(uncached["wall_seconds"] / cached["wall_seconds"], 2),
        "speedup_cpu": round(uncached["cpu_seconds"] / cached["cpu_seconds"], 2),
        "provenance": provenance({"lsa.seed": 0, "bootstrap.seed": 0}),
    }
    save("sweep", result)
    (RESULTS / "sweep.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


def markdown(r: dict[str, Any]) -> str:
    c, u = r["cached"], r["uncached"]
    best, test = c["best"], c["test"]
    lines = [
        "# glassrag sweep: 5 × 5 BM25 k1 × b on the demo train split (bench/sweep.py)", "",
        f"Grid: `{' '.join('--set ' + g for g in r['grid'])}`; 25 configurations, each calibrated (gate and reader, on "
        "train) and evaluated on the 84 train questions; the best by ranking mrr@10 evaluated on test once. "
        "Both rows include that test evaluation; neither includes building the index. "
        f"Each row is the shortest of {r['repeats']} run(s), cached and uncached alternating "
        f"(all wall times: cached {r['all_wall_seconds']['cached']}, uncached {r['all_wall_seconds']['uncached']}).", "",
        "| run | wall s | CPU s | load average (1 min) before | stage outputs reused / computed |",
        "|---|---|---|---|---|",
        f"| cached (one sweep) | {c['wall_seconds']:.1f} | {c['cpu_seconds']:.1f} | {c['load_before']} | "
        f"{c['timing']['cache']['hits']:,} / {c['timing']['cache']['misses']:,} |",
        f"| uncached (calibrate + eval per configuration) | {u['wall_seconds']:.1f} | {u['cpu_seconds']:.1f} | "
        f"{u['load_before']} | — |", "",
        f"Speed-up from caching: **{r['speedup_wall']}×** wall, **{r['speedup_cpu']}×** CPU. "
        f"Same figures for all 25 configurations: **{r['same_figures']}**; same choice: {r['same_choice']}.", "",
        f"Best on train: {best['name']} ({', '.join(f'{k} = {v}' for k, v in best['settings'].items())}), "
        f"ranking mrr@10 {best['metric']['value']:.3f} [{best['metric']['low']:.3f}, {best['metric']['high']:.3f}]"
        + (f", tied with {', '.join(best['tied_with'])}" if best["tied_with"] else "") + ".",
        f"Test (evaluated once): ranking mrr@10 {test['metric']['value']:.3f} "
        f"[{test['metric']['low']:.3f}, {test['metric']['high']:.3f}] on {test['questions']} questions.", "",
        f"Machine: {r['provenance']['machine']['cpus']} CPUs, shared with other benchmarks (see the load); "
        f"code {r['provenance']['code_version']}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
