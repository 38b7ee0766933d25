"""Ingest time and peak memory against file size: one plain-text file of 1, 4, 16 and 64 MB.

Each size is ingested by `glassrag ingest` in its own process (default settings: heading
chunker, 200 words, BM25 with LSA observed), timed by the wall clock, its peak resident
memory read from the kernel (`wait4` rusage of that child). Linear time means each 4×
step costs about 4× the time; bounded memory means peak RSS grows no faster than the text.

The text is deterministic: sentences of words drawn from a Zipf-distributed vocabulary of
50,000 made-up words (so the vocabulary stops growing as in real text), hard-wrapped at
80 columns like a README, a blank line every 6 sentences, an identifier such as E-4107 now
and then. Writes bench/results/ingest_scaling.json and .md with the versions of the code
and the packages that ran.

    python bench/ingest_scaling.py               # 1, 4, 16, 64 MB
    python bench/ingest_scaling.py --sizes 1 4   # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MB = 1024 * 1024


def make_text(n_bytes: int, seed: int = 13) -> str:
    """About `n_bytes` of plain ASCII text, the same for the same size and seed."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(2, 11, size=50_000)
    vocab = ["".join(rng.choice(letters, size=n)) for n in lengths]
    ranks = np.arange(1, len(vocab) + 1)
    p = 1.0 / ranks
    p /= p.sum()
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        words = rng.choice(len(vocab), size=6_000, p=p)
        cut = 0
        paragraph: list[str] = []
        for n_words in rng.integers(6, 30, size=400):
            sent = [vocab[i] for i in words[cut:cut + n_words]]
            cut += n_words
            if len(sent) < n_words:
                break
            if rng.random() < 0.05:
                sent.insert(1, f"E-{rng.integers(1000, 9999)}")
            paragraph.append(" ".join(sent).capitalize() + ".")
            if len(paragraph) == 6:
                block = textwrap.fill(" ".join(paragraph), 80) + "\n\n"
                parts.append(block)
                size += len(block)
                paragraph = []
    return "".join(parts)[:n_bytes].rstrip() + "\n"


def run_once(text_file: Path, index: Path) -> dict[str, float]:
    """`glassrag ingest` in a child process: wall seconds and the child's peak RSS in MB."""
    cmd = [sys.executable, "-m", "glassrag.cli", "ingest", str(text_file), "--index", str(index),
           "--max-mb", "1000"]
    t0 = time.perf_counter()
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"ingest failed ({child.returncode}): {stderr.decode(errors='replace')}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def code_version() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+uncommitted changes in src/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 4, 16, 64], help="MB")
    parser.add_argument("--name", default="ingest_scaling", help="result file name in bench/results")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="glassrag-scaling-") as tmp:
        for mb in args.sizes:
            text_file = Path(tmp) / f"text-{mb}mb.txt"
            text_file.write_text(make_text(mb * MB), encoding="ascii")
            measured = run_once(text_file, Path(tmp) / f"index-{mb}mb")
            text_file.unlink()
            row = {"mb": mb, **measured}
            if rows:
                prev = rows[-1]
                step = mb / prev["mb"]
                row["size_factor"] = step
                row["time_factor"] = round(measured["seconds"] / prev["seconds"], 2)
                row["rss_factor"] = round(measured["peak_rss_mb"] / prev["peak_rss_mb"], 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    per_mb = [r["seconds"] / r["mb"] for r in rows]
    result = {
        "what": "glassrag ingest of one plain-text file per size, default settings, fresh index",
        "code": code_version(),
        "python": platform.python_version(),
        "packages": {p: version(p) for p in ("glassrag", "numpy", "scipy", "PyStemmer")},
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (shared)",
        "rows": rows,
        "seconds_per_mb": [round(x, 3) for x in per_mb],
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| MB | seconds | s/MB | peak RSS (MB) | time × per 4× size | RSS × per 4× size |",
             "|---:|---:|---:|---:|---:|---:|"]
    for r, s in zip(rows, per_mb):
        lines.append(f"| {r['mb']} | {r['seconds']:.1f} | {s:.2f} | {r['peak_rss_mb']:.0f} | "
                     f"{r.get('time_factor', '—')} | {r.get('rss_factor', '—')} |")
    (RESULTS / f"{args.name}.md").write_text(
        f"{result['what']}; code {result['code']}, Python {result['python']}, "
        + ", ".join(f"{k} {v}" for k, v in result["packages"].items()) + "\n\n"
        + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
