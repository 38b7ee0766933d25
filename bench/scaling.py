"""glassrag and bm25s from 5k to 1M chunks, in the same run: build, open, query, disk.

    python bench/scaling.py                              # 5k, 50k, 250k, 1M (about an hour)
    python bench/scaling.py --sizes 5000 50000           # a quick look
    python bench/scaling.py --sizes 1000000 --append     # one size, merged into the results
    python bench/scaling.py --pause mutmut               # other work stopped while queries are timed

The corpus is SciFact (../shared/bench/scifact) repeated until it has N one-chunk
documents: copy 0 is SciFact itself, copy k > 0 gives every document a new id
(`ID-rK`) and a lightly perturbed text (a seeded ~5% of words dropped, a few neighbours
swapped), so vocabulary and lengths stay those of real abstracts. Queries are the 300
SciFact test queries; the learned reranker is trained on the train split, where a copy of a
relevant document counts as relevant.

Every step runs in its own process, one after the other (never two builds at once: at
1M both need gigabytes), and its peak RSS is the kernel's (`wait4` rusage). glassrag:
`glassrag ingest` with k1 0.9, b 0.4, LSA observed; then `glassrag rerank-train`; then an
unchanged re-ingest; then a fresh process opens the index (`EmbeddedStore.read` +
`Pipeline`) and answers the queries. bm25s: `bm25s.BM25(method="lucene")` indexing the
same tokens (glassrag's analyzer, turned into ids per document as `bm25s.tokenize` does;
the analysis is inside the build time and memory, as it is inside glassrag's), `save`, then a fresh process `BM25.load` and `retrieve`
(one thread). BM25 query time is top-100 from already analysed tokens on both sides.

Writes bench/results/scaling.json and scaling.md with the git commit, package versions,
machine, the load average before every step and the mean run queue during it (runnable
threads on the machine, the measured process included; the load average still remembers
the minutes before). Another engineer's tests may share the machine: `--pause PATTERN`
stops the processes matching PATTERN (SIGSTOP) while the open-and-query children run, and
continues them after (SIGCONT, also on failure); builds run beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))  # bench/common.py, imported by the parent only
SCIFACT = ROOT.parent / "shared" / "bench" / "scifact"
RESULTS = ROOT / "bench" / "results"
WORK = Path(os.environ.get("GLASSRAG_SCALING_DIR", "/tmp/glassrag-scaling"))
K = 100
CONFIG = """[bm25]\nk1 = 0.9\nb = 0.4\n"""


# the corpus ---------------------------------------------------------------------------

def make_corpus(n: int, root: Path | None = None) -> Path:
    """A BEIR folder of n documents (cached under `root`, WORK when None)."""
    folder = (root or WORK) / f"corpus-{n}"
    folder.mkdir(parents=True, exist_ok=True)
    write_qrels(folder, n)
    if (folder / "corpus.jsonl").is_file():
        return folder
    base = [json.loads(line) for line in (SCIFACT / "corpus.jsonl").read_text().splitlines() if line.strip()]
    tmp = folder / "corpus.jsonl.tmp"
    with tmp.open("w") as out:
        for i in range(n):
            copy, doc = divmod(i, len(base))
            row = base[doc]
            if copy == 0:
                out.write(json.dumps(row) + "\n")
                continue
            rng = np.random.default_rng(copy * 100_003 + doc)
            words = row["text"].split()
            keep = [w for w, r in zip(words, rng.random(len(words))) if r > 0.05] or words
            for j in rng.integers(0, max(len(keep) - 1, 1), size=3):
                if j + 1 < len(keep):
                    keep[j], keep[j + 1] = keep[j + 1], keep[j]
            out.write(json.dumps({"_id": f"{row['_id']}-r{copy}", "title": row["title"],
                                  "text": " ".join(keep)}) + "\n")
    tmp.rename(folder / "corpus.jsonl")
    return folder


def write_qrels(folder: Path, n: int) -> None:
    """SciFact's queries and qrels, where a perturbed copy of a relevant document is
    relevant too (with ~200 copies of each document at 1M, the originals alone are rarely
    among a question's 20 reranker candidates, and the reranker could not be trained)."""
    shutil.copy(SCIFACT / "queries.jsonl", folder / "queries.jsonl")
    (folder / "qrels").mkdir(exist_ok=True)
    size = sum(1 for line in (SCIFACT / "corpus.jsonl").read_text().splitlines() if line.strip())
    order = {json.loads(line)["_id"]: i for i, line in
             enumerate(l for l in (SCIFACT / "corpus.jsonl").read_text().splitlines() if l.strip())}
    for split in ("train", "test"):
        lines = (SCIFACT / "qrels" / f"{split}.tsv").read_text().splitlines()
        out = [lines[0]]
        for line in lines[1:]:
            cells = line.strip().split("\t")
            if len(cells) != 3:
                continue
            q, d, grade = cells
            out.append(line.strip())
            if d in order:
                out += [f"{q}\t{d}-r{k}\t{grade}" for k in range(1, n // size + 1)
                        if k * size + order[d] < n]
        (folder / "qrels" / f"{split}.tsv").write_text("\n".join(out) + "\n")


def test_queries() -> list[str]:
    queries = {}
    for line in (SCIFACT / "queries.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            queries[q["_id"]] = q["text"]
    ids = [line.split("\t")[0] for line in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    return [queries[q] for q in dict.fromkeys(ids)]


# measuring a child ----------------------------------------------------------------------

def run_child(args: list[str], env: dict[str, str] | None = None) -> dict:
    """Run a child; its wall time, peak RSS (MB) and the JSON it printed last, if any."""
    from common import RunQueue  # in the parent only: a child's memory is measured
    t0 = time.perf_counter()
    load = os.getloadavg()
    with tempfile.TemporaryFile("w+") as so, tempfile.TemporaryFile("w+") as se:
        proc = subprocess.Popen(args, stdout=so, stderr=se, text=True,
                                env={**os.environ, **(env or {})})
        with RunQueue() as queue:
            _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        so.seek(0)
        se.seek(0)
        out, errs = so.read(), se.read()
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0,):
        raise RuntimeError(f"{' '.join(args)} failed:\n{errs[-3000:]}\n{out[-2000:]}")
    last = [line for line in out.splitlines() if line.startswith("{")]
    return {"wall_s": round(wall, 3), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "load_before": [round(x, 2) for x in load], "load_after": [round(x, 2) for x in os.getloadavg()],
            "run_queue": queue.mean(),
            **(json.loads(last[-1]) if last else {})}


def disk_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1)


def rss_mb(field: str = "VmRSS") -> float:
    """Resident memory (MB) of this process; RssAnon is what it allocated, RssFile the pages
    of memory-mapped files it touched (page cache the kernel may reclaim)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


# children ---------------------------------------------------------------------------------

def child_glassrag_open(index: str) -> None:
    """Open the index, build the pipeline, answer the test queries: times and RSS."""
    t0 = time.perf_counter()
    from glassrag.pipeline import Pipeline
    from glassrag.store import EmbeddedStore

    imported = time.perf_counter()
    idx = EmbeddedStore(index).read()
    opened = time.perf_counter()
    pipe = Pipeline(idx)
    built = time.perf_counter()
    rss_open = rss_mb()
    queries = test_queries()
    tokens = [idx.analyzer(q) for q in queries]
    bm25 = []
    for rep in range(2):  # the first pass reads the columns from disk; the second is measured
        times = []
        for t in tokens:
            a = time.perf_counter()
            pipe.bm25.search(t, K)
            times.append((time.perf_counter() - a) * 1000)
        bm25 = times
    ask, cold, stages = [], [], {}
    for rep in range(2):  # the first pass also reads pages and fills the reranker's cache
        times = []
        for q in queries:
            a = time.perf_counter()
            answer = pipe.run(q)
            times.append((time.perf_counter() - a) * 1000)
            if rep == 1:
                for s in answer.trace:
                    stages.setdefault(s.name, []).append(s.ms)
        cold, ask = ask, times
    print(json.dumps({
        "import_s": round(imported - t0, 3), "open_s": round(opened - imported, 3),
        "pipeline_s": round(built - opened, 3), "rss_after_open_mb": rss_open,
        "rss_after_queries_mb": rss_mb(), "rss_anon_after_queries_mb": rss_mb("RssAnon"),
        "rss_file_after_queries_mb": rss_mb("RssFile"),
        "bm25_p50_ms": pct(bm25, 50), "bm25_p95_ms": pct(bm25, 95),
        "ask_p50_ms": pct(ask, 50), "ask_p95_ms": pct(ask, 95),
        "ask_first_pass_p50_ms": pct(cold, 50), "ask_first_pass_p95_ms": pct(cold, 95),
        "stage_p50_ms": {k: pct(v, 50) for k, v in stages.items()},
        "rerank": pipe.config.rerank.method, "notes": [n for s in answer.trace[:1] for n in s.notes][1:],
    }))


def child_bm25s_build(corpus: str, out: str) -> None:
    import bm25s

    from glassrag.lexical.analyze import Analyzer

    t0 = time.perf_counter()
    analyzer = Analyzer()
    vocab: dict[str, int] = {}
    ids = []  # token ids per document, as bm25s.tokenize returns them
    with open(Path(corpus) / "corpus.jsonl") as f:
        for line in f:
            row = json.loads(line)
            ids.append([vocab.setdefault(t, len(vocab)) for t in analyzer(f"{row['title']}\n{row['text']}")])
    analysed = time.perf_counter()
    model = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
    model.index((ids, vocab), show_progress=False)
    model.save(out)
    print(json.dumps({"analyse_s": round(analysed - t0, 3), "index_s": round(time.perf_counter() - analysed, 3)}))


def child_bm25s_open(out: str) -> None:
    import bm25s

    from glassrag.lexical.analyze import Analyzer

    t0 = time.perf_counter()
    model = bm25s.BM25.load(out)
    opened = time.perf_counter()
    rss_open = rss_mb()
    analyzer = Analyzer()
    vocab = model.vocab_dict
    tokens = [[t for t in analyzer(q) if t in vocab] or [next(iter(vocab))] for q in test_queries()]
    times: list[float] = []
    for rep in range(2):
        times = []
        for t in tokens:
            a = time.perf_counter()
            model.retrieve([t], k=K, show_progress=False, n_threads=1)
            times.append((time.perf_counter() - a) * 1000)
    print(json.dumps({"open_s": round(opened - t0, 3), "rss_after_open_mb": rss_open,
                      "rss_after_queries_mb": rss_mb(), "rss_anon_after_queries_mb": rss_mb("RssAnon"),
                      "rss_file_after_queries_mb": rss_mb("RssFile"),
                      "bm25_p50_ms": pct(times, 50), "bm25_p95_ms": pct(times, 95)}))


# the run ----------------------------------------------------------------------------------

def measure(n: int, which: list[str], pause: str | None = None) -> dict:
    from common import paused

    corpus = make_corpus(n)
    row: dict = {"size": n}
    py = sys.executable
    glassrag = str(Path(py).parent / "glassrag")
    if "glassrag" in which:
        index = WORK / f"glassrag-{n}"
        shutil.rmtree(index, ignore_errors=True)
        config = WORK / "config.toml"
        config.write_text(CONFIG)
        print(f"[{n}] glassrag ingest", flush=True)
        build = run_child([glassrag, "ingest", str(corpus), "--index", str(index), "--config", str(config)])
        print(f"[{n}] glassrag rerank-train", flush=True)
        train = run_child([glassrag, "rerank-train", "--index", str(index), "--golden", str(corpus)])
        gens = sorted(p.name for p in index.iterdir() if p.name.startswith("gen-"))
        print(f"[{n}] glassrag ingest (unchanged)", flush=True)
        again = run_child([glassrag, "ingest", str(corpus), "--index", str(index), "--config", str(config)])
        rewritten = sorted(p.name for p in index.iterdir() if p.name.startswith("gen-")) != gens
        print(f"[{n}] glassrag open + queries", flush=True)
        with paused(pause) as stopped:
            opened = run_child([py, __file__, "--child", "glassrag-open", str(index)])
        row["glassrag"] = {"build_s": build["wall_s"], "build_peak_rss_mb": build["peak_rss_mb"],
                           "rerank_train_s": train["wall_s"],
                           "reingest_unchanged_s": again["wall_s"], "reingest_rewrote": rewritten,
                           "disk_mb": disk_mb(index), **opened,
                           "load": {"build": build["load_before"], "open": opened["load_before"]},
                           "run_queue": {"build": build["run_queue"], "open": opened["run_queue"]},
                           "paused_during_open": len(stopped)}
    if "bm25s" in which:
        out = WORK / f"bm25s-{n}"
        shutil.rmtree(out, ignore_errors=True)
        print(f"[{n}] bm25s build", flush=True)
        build = run_child([py, __file__, "--child", "bm25s-build", str(corpus), str(out)])
        print(f"[{n}] bm25s open + queries", flush=True)
        with paused(pause) as stopped:
            opened = run_child([py, __file__, "--child", "bm25s-open", str(out)])
        row["bm25s"] = {"build_s": build["wall_s"], "build_peak_rss_mb": build["peak_rss_mb"],
                        "analyse_s": build.get("analyse_s"), "disk_mb": disk_mb(out), **opened,
                        "load": {"build": build["load_before"], "open": opened["load_before"]},
                        "run_queue": {"build": build["run_queue"], "open": opened["run_queue"]},
                        "paused_during_open": len(stopped)}
    return row


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src", "bench"],
                               capture_output=True, text=True).stdout.strip()
        return head + ("+uncommitted" if dirty else "")
    except OSError:
        return "unknown"


METRICS = [("build_s", "build s"), ("build_peak_rss_mb", "build peak RSS MB"), ("open_s", "open s"),
           ("pipeline_s", "pipeline build s"), ("rss_after_open_mb", "RSS after open MB"),
           ("rss_after_queries_mb", "RSS after queries MB"),
           ("rss_anon_after_queries_mb", "  of which allocated (RssAnon)"),
           ("rss_file_after_queries_mb", "  of which mapped files (RssFile)"), ("bm25_p50_ms", "BM25 p50 ms"),
           ("bm25_p95_ms", "BM25 p95 ms"), ("ask_p50_ms", "ask p50 ms"), ("ask_p95_ms", "ask p95 ms"),
           ("ask_first_pass_p50_ms", "ask p50 ms, first pass (cold)"),
           ("disk_mb", "disk MB"), ("reingest_unchanged_s", "unchanged re-ingest s")]


def growth(rows: list[dict], system: str, key: str) -> list[str]:
    """Per step: the factor, and the factor scaled to a 5× step (f^(ln 5 / ln ratio))."""
    out = []
    for a, b in zip(rows, rows[1:]):
        x, y = a.get(system, {}).get(key), b.get(system, {}).get(key)
        if not x or not y:
            out.append("—")
            continue
        f = y / x
        per5 = f ** (np.log(5) / np.log(b["size"] / a["size"]))
        out.append(f"{f:.2f}× ({per5:.2f}× per 5×)")
    return out


def step_load(row: dict) -> str:
    """`build [load] (run queue q), open [load] (run queue q), n paused` for one system's row."""
    queue = row.get("run_queue", {})
    parts = []
    for step in ("build", "open"):
        part = f"{step} {row['load'][step]}"
        if step in queue:
            part += f" (run queue {queue[step]})"
        parts.append(part)
    if row.get("paused_during_open"):
        parts.append(f"{row['paused_during_open']} processes paused during open")
    return ", ".join(parts)


def markdown(result: dict) -> str:
    rows = sorted(result["rows"], key=lambda r: r["size"])
    sizes = [f"{r['size']:,}" for r in rows]
    lines = [f"# Scaling: glassrag and bm25s, {', '.join(sizes)} chunks", "",
             f"code {result['commit']}, {result['machine']}, "
             f"{', '.join(f'{k} {v}' for k, v in result['packages'].items())}; {result['date']}", "",
             "| metric | system | " + " | ".join(sizes) + " | growth per step |",
             "|---|---|" + "---|" * len(sizes) + "---|"]
    for key, label in METRICS:
        for system in ("glassrag", "bm25s"):
            vals = [r.get(system, {}).get(key) for r in rows]
            if all(v is None for v in vals):
                continue
            cells = ["—" if v is None else f"{v:,}" for v in vals]
            lines.append(f"| {label} | {system} | " + " | ".join(cells) + " | "
                         + "; ".join(growth(rows, system, key)) + " |")
    lines += ["", "Ratios at each size (glassrag / bm25s; below 1 is better for glassrag):", "",
              "| size | build s | build peak RSS | RSS after open | BM25 p50 | BM25 queries/s ×bm25s |",
              "|---|---|---|---|---|---|"]
    for r in rows:
        g, b = r.get("glassrag"), r.get("bm25s")
        if not g or not b:
            continue
        lines.append(f"| {r['size']:,} | {g['build_s'] / b['build_s']:.2f} | "
                     f"{g['build_peak_rss_mb'] / b['build_peak_rss_mb']:.2f} | "
                     f"{g['rss_after_open_mb'] / b['rss_after_open_mb']:.2f} | "
                     f"{g['bm25_p50_ms'] / b['bm25_p50_ms']:.2f} | {b['bm25_p50_ms'] / g['bm25_p50_ms']:.2f} |")
    lines += ["", "Load average (1, 5, 15 min) before each step; mean run queue during it (runnable "
              "threads, the step's own included; 2 cores); processes paused while the open-and-query "
              "step ran:", ""]
    for r in rows:
        for system in ("glassrag", "bm25s"):
            if system in r:
                lines.append(f"- {r['size']:,} {system}: " + step_load(r[system]))
    lines += ["", "Stage p50 (ms) inside glassrag's ask:", ""]
    for r in rows:
        if "glassrag" in r:
            lines.append(f"- {r['size']:,}: " + ", ".join(f"{k} {v}" for k, v in
                                                          r["glassrag"]["stage_p50_ms"].items()))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 50_000, 250_000, 1_000_000])
    parser.add_argument("--only", choices=["glassrag", "bm25s"])
    parser.add_argument("--append", action="store_true", help="merge into the existing results")
    parser.add_argument("--out", default="scaling")
    parser.add_argument("--pause", help="stop processes matching this pattern (pgrep -f) while "
                                        "the open-and-query steps run")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        {"glassrag-open": child_glassrag_open, "bm25s-build": child_bm25s_build,
         "bm25s-open": child_bm25s_open}[args.child[0]](*args.child[1:])
        return
    which = [args.only] if args.only else ["glassrag", "bm25s"]
    path = RESULTS / f"{args.out}.json"
    previous = json.loads(path.read_text()) if args.append and path.is_file() else {"rows": []}
    rows = {r["size"]: r for r in previous["rows"]}
    result = {
        "commit": git_commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, "
                   f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
                   f"Python {platform.python_version()}",
        "packages": {p: version(p) for p in ("glassrag", "bm25s", "numpy", "scipy")},
        "rows": [],
    }
    for n in args.sizes:
        measured = measure(n, which, args.pause)
        rows[n] = {**rows.get(n, {}), **measured}
        result["rows"] = sorted(rows.values(), key=lambda r: r["size"])
        RESULTS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")
        (RESULTS / f"{args.out}.md").write_text(markdown(result))
        print(json.dumps(measured, indent=1), flush=True)


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main()
