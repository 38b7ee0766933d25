"""What one cached pipeline costs in memory and time, to size the web app's settings cache.

A pipeline is built per index and settings combination (glassrag/web/catalog.py keeps the
most recent ones). Each holds its own BM25 score matrix (k1 and b are baked into it) and a
few per-chunk tables; the index itself is shared. This builds PIPELINES pipelines with
distinct k1 on (1) the demo index and (2) a synthetic corpus of about CHUNKS chunks made of
the demo's words, and reports per pipeline: the memory it keeps (tracemalloc, Python and
numpy allocations), the estimate `glassrag.web.catalog.pipeline_bytes` makes from the index
alone, and the time to build it. Writes bench/results/pipeline_memory.{json,md}.

    python bench/pipeline_memory.py                 # demo + about 20,000 chunks
    python bench/pipeline_memory.py --chunks 60000
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
PIPELINES = 6


def synthetic(folder: Path, chunks: int, vocabulary: list[str]) -> Path:
    """Markdown files of 10 sections of ~150 words each, drawn from the demo's words."""
    rng = random.Random(0)
    files = max(1, chunks // 10)
    for f in range(files):
        parts = [f"# Document {f}\n"]
        for s in range(10):
            words = " ".join(rng.choice(vocabulary) for _ in range(150))
            parts.append(f"\n## Part {s} of {f}\n\n{words}.\n")
        (folder / f"doc{f:06d}.md").write_text("".join(parts), encoding="utf-8")
    return folder


def measure(index) -> dict:
    from glassrag.pipeline import Pipeline
    from glassrag.web.catalog import pipeline_bytes

    Pipeline(index, index.config.with_overrides(bm25={"k1": 1.0}))  # warm caches of the index
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept, times = [], []
    for i in range(PIPELINES):
        t = time.perf_counter()
        kept.append(Pipeline(index, index.config.with_overrides(bm25={"k1": 1.1 + i / 10})))
        times.append(time.perf_counter() - t)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {"chunks": len(index.chunks), "terms": len(index.counts.vocab),
            "postings": int(index.counts.tf.nnz),
            "measured_mb": used / PIPELINES / 2**20, "estimated_mb": pipeline_bytes(index) / 2**20,
            "build_s": sorted(times)[len(times) // 2]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=20_000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from glassrag.config import Config
    from glassrag.demo import demo_docs
    from glassrag.indexer import build_index

    rows = {}
    demo, _ = build_index([demo_docs()], Config())
    rows["demo"] = measure(demo)
    vocabulary = sorted(demo.counts.vocab)
    with tempfile.TemporaryDirectory() as tmp:
        folder = synthetic(Path(tmp), args.chunks, vocabulary)
        big, _ = build_index([folder], Config())
        rows[f"synthetic {len(big.chunks):,} chunks"] = measure(big)
    RESULTS.mkdir(parents=True, exist_ok=True)
    meta = {"python": platform.python_version(), "machine": platform.machine(), "pipelines": PIPELINES}
    (RESULTS / "pipeline_memory.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = ["| index | chunks | postings | measured MB / pipeline | estimated MB | build s (median) |",
             "|---|---|---|---|---|---|"]
    for name, r in rows.items():
        lines.append(f"| {name} | {r['chunks']:,} | {r['postings']:,} | {r['measured_mb']:.2f} | "
                     f"{r['estimated_mb']:.2f} | {r['build_s']:.3f} |")
    (RESULTS / "pipeline_memory.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
