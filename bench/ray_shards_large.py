"""Sharded BM25 on a local Ray cluster at a million chunks: bench/ray_shards.py --chunks N runs this.

    python bench/ray_shards.py --chunks 1000000      # the first run builds for ~10 min, then ~5 min

The corpus is bench/scaling.py's (`make_corpus`: SciFact repeated until it has N one-chunk
documents, every copy after the first lightly perturbed). What is slow is built once and cached
in a folder outside the repository, CACHE (~/.cache/glassrag/bench-1m, or $GLASSRAG_BENCH_1M;
--cache DIR), which a rerun reuses: the corpus (corpus-N/), the single embedded index ingested
from it with the default settings, BM25 and LSA observed (`glassrag ingest`, index-N/, its build
time and peak memory in index-N.json), and that index cut into --shards shards (`shard_index`,
sharded-N-S/, the cut's time and peak memory in sharded-N-S.json). Delete a folder to rebuild it.

Each step runs in a process of its own, one after the other, so that every figure of memory is
one process's and no two large ones are resident at once:

1. the single index: a fresh process opens it, answers the 300 SciFact test queries with the
   in-process `bm25` retriever (p50 of the best of 3 passes per question) and writes each query's
   top 100 (rows, scores); its resident memory after the queries (VmRSS, and of it RssAnon, what
   it allocated, and RssFile, pages of the memory-mapped index it touched);
2. the shards' own search: a fresh process opens each shard (ShardServer) and times its search
   for the same queries (the slowest shard's time per question is the model's search cost);
3. the cluster: this process (the driver) opens the catalogue, starts a local --nodes-node
   cluster (glassrag/shard/local.py), asks the 300 queries through `ray-bm25` (its fan-out and
   merge, p50 as in 1) and once more through the shard pool for the top 100s, compared with 1's
   (top 10 rows, and the whole list with its scores to the bit); then each shard actor's resident
   memory, the driver's, and all the cluster's processes together (Ray's own: GCS, raylets, idle
   workers, and the actors).

Memory ratio: the largest shard actor's VmRSS ÷ the single index's process's, both after the same
300 queries. Equality and timing at N chunks are measured, not extrapolated from SciFact.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # bench/common.py, bench/scaling.py
from scaling import make_corpus, run_child  # noqa: E402

CACHE = Path(os.environ.get("GLASSRAG_BENCH_1M") or Path.home() / ".cache" / "glassrag" / "bench-1m")
SCRIPT = str(Path(__file__).parent / "ray_shards.py")  # its --child steps


def proc_mb(pid: int) -> dict[str, float] | None:
    """VmRSS, RssAnon and RssFile (MB) of process `pid` (Linux's /proc), None when it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    out = {}
    for line in lines:
        key = line.split(":")[0]
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = round(int(line.split()[1]) / 1024, 1)
    return out


def cluster_processes_mb(tmp: str) -> dict[str, float]:
    """The processes of the cluster whose RAY_TMPDIR is `tmp` (this process spared): how many,
    and their VmRSS summed (pages shared between them, Ray's shared libraries, count once each)."""
    mark, rss, count = f"RAY_TMPDIR={tmp}".encode(), 0.0, 0
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if int(entry.name) != os.getpid() and mark in (entry / "environ").read_bytes().split(b"\0"):
                rss += (proc_mb(int(entry.name)) or {}).get("VmRSS", 0.0)
                count += 1
        except (OSError, ValueError):
            continue
    return {"processes": count, "vmrss_sum_mb": round(rss, 1)}


def prepare(n: int, shards: int, cache: Path) -> dict:
    """The corpus, the single index and its shards, each built unless CACHE has it; what their
    builds measured (from CACHE's records when they were built by an earlier run)."""
    cache.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    corpus = make_corpus(n, cache)
    corpus_s = time.perf_counter() - t0
    py = sys.executable
    index, record = cache / f"index-{n}", cache / f"index-{n}.json"
    built_now = not ((index / "CURRENT").exists() and record.is_file())
    if built_now:
        print(f"[{n}] glassrag ingest (default settings) into {index}", flush=True)
        build = run_child([py, "-m", "glassrag", "ingest", str(corpus), "--index", str(index)])
        record.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                      "command": f"glassrag ingest {corpus} --index {index}", **build}, indent=1))
    sharded, cut_record = cache / f"sharded-{n}-{shards}", cache / f"sharded-{n}-{shards}.json"
    cut_now = built_now or not ((sharded / "CURRENT").exists() and cut_record.is_file())
    if cut_now:
        print(f"[{n}] shard_index into {sharded}", flush=True)
        cut = run_child([py, SCRIPT, "--child", "shard", str(index), str(shards), str(sharded)])
        cut_record.write_text(json.dumps({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), **cut},
                                         indent=1))
    return {"cache": str(cache), "corpus": str(corpus), "corpus_s": round(corpus_s, 1),
            "index": str(index), "sharded": str(sharded), "built_this_run": built_now, "cut_this_run": cut_now,
            "build": json.loads(record.read_text()), "cut": json.loads(cut_record.read_text())}


# the children (bench/ray_shards.py --child NAME ARGS) -------------------------------------------

def child_shard(index: str, shards: str, out: str) -> None:
    """Cut `index` into `shards` shards at `out` (replacing what an earlier cut left there)."""
    import shutil

    from glassrag.shard import shard_index
    from glassrag.store import EmbeddedStore

    shutil.rmtree(out, ignore_errors=True)
    report = shard_index(EmbeddedStore(index).read(), int(shards), Path(out))
    print(json.dumps({"build": report.build, "shard_chunks": list(report.chunks),
                      "shard_documents": list(report.documents), "shard_s": [round(s, 2) for s in report.seconds]}))


def test_queries(index):  # the 300 SciFact test queries, analysed by `index`'s analyzer
    from common import load_scifact

    from glassrag.query import Query

    _, _, qids, texts, _ = load_scifact("test")
    return qids, [Query(t, index.analyzer(t)) for t in texts]


def child_single(index_dir: str, out: str) -> None:
    """Open the single index, time the in-process `bm25` retriever, write the top `depth` lists."""
    from ray_shards import per_question_ms, retriever

    from glassrag.lexical.bm25 import top_k
    from glassrag.store import EmbeddedStore

    t0 = time.perf_counter()
    index = EmbeddedStore(index_dir).read()
    open_s = time.perf_counter() - t0
    after_open = proc_mb(os.getpid())
    _, queries = test_queries(index)
    local = retriever(index, "bm25")
    ms = per_question_ms(lambda q: local.apply(q, []), queries)
    tops = [top_k(local.bm25.score_all(q.tokens), index.config.retrieve.depth) for q in queries]
    np.savez(out, rows=np.concatenate([r for r, _ in tops]), scores=np.concatenate([s for _, s in tops]),
             lengths=np.array([len(r) for r, _ in tops]))
    print(json.dumps({"chunks": len(index.chunks), "documents": len(index.documents), "open_s": round(open_s, 3),
                      "rss_after_open": after_open, "rss_after_queries": proc_mb(os.getpid()),
                      "in_process_ms": [round(x, 4) for x in ms]}))


def child_shard_search(sharded: str) -> None:
    """Each shard's own search time per question (ms, best of 3 passes), in one process."""
    from ray_shards import per_question_ms

    from glassrag.shard.serve import ShardServer
    from glassrag.store import EmbeddedStore

    catalogue = EmbeddedStore(sharded).read()
    params, c = catalogue.parts["shards"].params, catalogue.config
    _, queries = test_queries(catalogue)
    servers = [ShardServer(str(Path(sharded) / f), params["build"]) for f in params["folders"]]
    per = [per_question_ms(lambda q, s=s: s.search(q.tokens, c.retrieve.depth, c.bm25.k1, c.bm25.b), queries)
           for s in servers]
    print(json.dumps({"shard_search_ms": [[round(x, 4) for x in p] for p in per]}))


CHILDREN = {"shard": child_shard, "single": child_single, "shard-search": child_shard_search}


# the run ----------------------------------------------------------------------------------------

def label(n: int) -> str:
    """1000000 → 1m, 250000 → 250k: the results' file name."""
    return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k" if n % 1000 == 0 else str(n)


def run(n: int, shards: int, nodes: int, cache: Path) -> dict:
    import resource

    from ray_shards import per_question_ms, retriever

    from glassrag.shard import serve
    from glassrag.shard.local import local_cluster
    from glassrag.store import EmbeddedStore

    prep = prepare(n, shards, cache)
    with tempfile.TemporaryDirectory(prefix="ray-shards-") as tmp:
        print(f"[{n}] the single index: open, 300 queries", flush=True)
        single = run_child([sys.executable, SCRIPT, "--child", "single", prep["index"], f"{tmp}/tops.npz"])
        saved = np.load(f"{tmp}/tops.npz")
        ends = np.cumsum(saved["lengths"])
        want = [(r, s) for r, s in zip(np.split(saved["rows"], ends[:-1]), np.split(saved["scores"], ends[:-1]))]
    print(f"[{n}] each shard's own search", flush=True)
    own = run_child([sys.executable, SCRIPT, "--child", "shard-search", prep["sharded"]])
    shard_search = np.array(own.pop("shard_search_ms"))
    in_process = np.array(single.pop("in_process_ms"))

    load_before = [round(x, 2) for x in os.getloadavg()]
    t0 = time.perf_counter()
    catalogue = EmbeddedStore(prep["sharded"]).read()
    open_s = time.perf_counter() - t0
    _, queries = test_queries(catalogue)
    c = catalogue.config
    depth, k1, b = c.retrieve.depth, c.bm25.k1, c.bm25.b
    driver_open = proc_mb(os.getpid())
    print(f"[{n}] the cluster: {nodes} nodes, {shards} shard actors", flush=True)
    t0 = time.perf_counter()
    with local_cluster(nodes) as cluster:
        start_s = time.perf_counter() - t0
        sharded = retriever(catalogue, "ray-bm25")
        t0 = time.perf_counter()
        pool = sharded.pool()  # an actor a shard, each with its shard open
        actors_s = time.perf_counter() - t0
        opened = [proc_mb(w["pid"]) for w in pool.where()]
        t0 = time.perf_counter()
        sharded.apply(queries[0], [])
        first_s = time.perf_counter() - t0
        fan_out = np.array(per_question_ms(lambda q: sharded.apply(q, []), queries))
        equal = {"top10": 0, "depth_and_scores": 0}
        for q, (rows, scores) in zip(queries, want):
            got_rows, got_scores = pool.search(q.tokens, depth, k1, b)
            equal["top10"] += got_rows[:10].tolist() == rows[:10].tolist()
            equal["depth_and_scores"] += got_rows.tolist() == rows.tolist() and np.array_equal(got_scores, scores)
        where = pool.where()
        memory = {"shard_actors": [proc_mb(w["pid"]) for w in where], "shard_chunks": [w["chunks"] for w in where],
                  "shard_actors_after_open": opened,
                  "driver": proc_mb(os.getpid()), "driver_after_open": driver_open,
                  "driver_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "cluster": cluster_processes_mb(os.environ["RAY_TMPDIR"])}
        nodes_used = len({w["node"] for w in where})
    p50 = lambda xs: round(float(np.median(xs)), 3)  # noqa: E731
    slowest = shard_search.max(axis=0)
    largest = max(m["VmRSS"] for m in memory["shard_actors"])
    return {
        "corpus": {"chunks": single["chunks"], "documents": single["documents"], "queries": len(queries),
                   "depth": depth, "made_by": "bench/scaling.py make_corpus"},
        "shards": shards, "nodes": nodes, "nodes_used": nodes_used, "prepared": prep,
        "single": single, "catalogue_open_s": round(open_s, 3),
        "cluster": {"start_s": round(start_s, 2), "actors_open_s": round(actors_s, 2),
                    "first_question_s": round(first_s, 2)},
        "equal": equal, "memory": memory,
        "per_question_ms": {"in_process_p50": p50(in_process), "fan_out_p50": p50(fan_out),
                            "fan_out_p95": round(float(np.percentile(fan_out, 95)), 3),
                            "shard_search_p50": [p50(s) for s in shard_search],
                            "slowest_shard_search_p50": p50(slowest),
                            "overhead_p50": p50(fan_out - slowest)},
        "ratios": {"fan_out_over_in_process": round(float(np.median(fan_out) / np.median(in_process)), 2),
                   "slowest_shard_over_in_process": round(float(np.median(slowest) / np.median(in_process)), 3),
                   "largest_shard_actor_over_single_rss": round(largest / single["rss_after_queries"]["VmRSS"], 3),
                   "model_speedup_core_per_shard_without_overhead": round(
                       float(np.median(in_process) / np.median(slowest)), 2),
                   "model_core_per_shard_over_in_process": round(
                       float((np.median(slowest) + np.median(fan_out - slowest)) / np.median(in_process)), 2)},
        "load_average_before_cluster": load_before,
    }


def markdown(r: dict, stopped: str | None) -> str:
    pq, ra, m, s, prep = r["per_question_ms"], r["ratios"], r["memory"], r["single"], r["prepared"]
    mb = lambda d: f"{d['VmRSS']:,} MB (anon {d['RssAnon']:,}, file {d['RssFile']:,})"  # noqa: E731
    q, n = r["corpus"]["queries"], r["corpus"]["chunks"]
    lines = [
        f"# Sharded BM25 on Ray at {n:,} chunks: {r['shards']} shards on a local {r['nodes']}-node cluster",
        "",
        f"`{r['command']}`",
        "",
        f"{n:,} chunks ({r['corpus']['made_by']}: SciFact repeated with perturbed copies), the {q} SciFact "
        f"test queries, depth {r['corpus']['depth']}; the shards' actors on {r['nodes_used']} distinct nodes "
        "(1 CPU each, 127.0.0.1). "
        + (f"Paused during the run: processes matching {stopped!r}." if stopped else "Nothing paused")
        + f"; load average before the cluster {r['load_average_before_cluster']} on {os.cpu_count()} cores "
        "(shared with other people's work). The single index, the shards' own search and the cluster ran one "
        "after the other, each in its own process.",
        "",
        "| | value |", "|---|---|",
        f"| top 10 equal to the single index's | {r['equal']['top10']}/{q} |",
        f"| whole depth-{r['corpus']['depth']} list and scores equal, to the bit | "
        f"{r['equal']['depth_and_scores']}/{q} |",
        f"| resident memory, single index's process after the {q} queries (after opening it: "
        f"{s['rss_after_open']['VmRSS']:,} MB) | {mb(s['rss_after_queries'])} |",
        "| resident memory, each shard actor after the queries (after opening its shard: "
        + ", ".join(f"{a['VmRSS']:,}" for a in m["shard_actors_after_open"]) + " MB) | "
        + "; ".join(f"{c:,} chunks: {mb(a)}" for c, a in zip(m["shard_chunks"], m["shard_actors"])) + " |",
        f"| **largest shard actor ÷ single index's process** | **{ra['largest_shard_actor_over_single_rss']}×** |",
        f"| resident memory, driver (catalogue open, the cluster connected; peak {m['driver_peak_mb']:,} MB) | "
        f"{mb(m['driver'])} |",
        f"| all the cluster's processes ({m['cluster']['processes']}: GCS, raylets, workers, actors), VmRSS summed | "
        f"{m['cluster']['vmrss_sum_mb']:,} MB |",
        f"| per question p50, in-process bm25 (single index) | {pq['in_process_p50']} ms |",
        f"| per question p50, ray-bm25 fan-out and merge | {pq['fan_out_p50']} ms (p95 {pq['fan_out_p95']}) |",
        f"| **fan-out ÷ in-process** | **{ra['fan_out_over_in_process']}×** |",
        f"| slowest shard's own search p50 (each: {', '.join(map(str, pq['shard_search_p50']))} ms) | "
        f"{pq['slowest_shard_search_p50']} ms ({ra['slowest_shard_over_in_process']}× in-process) |",
        f"| overhead p50 (fan-out − slowest shard's search) | {pq['overhead_p50']} ms |",
        f"| cluster start / actors started, shards open / first question | {r['cluster']['start_s']} s / "
        f"{r['cluster']['actors_open_s']} s / {r['cluster']['first_question_s']} s |",
        f"| single index: open / build (`glassrag ingest`, default settings: BM25, LSA observed) | "
        f"{s['open_s']} s / {prep['build']['wall_s']} s, peak {prep['build']['peak_rss_mb']:,} MB |",
        f"| cut into {r['shards']} shards (`shard_index`, one process) | {prep['cut']['wall_s']} s "
        f"(each shard {', '.join(map(str, prep['cut']['shard_s']))} s), peak {prep['cut']['peak_rss_mb']:,} MB |",
        "",
        f"The corpus, the index and its shards are cached in {prep['cache']} (built by "
        + ("this run" if prep["built_this_run"] else f"an earlier run that finished at {prep['build']['date']}")
        + "); a rerun reuses them.",
        "",
        "Model, not a measurement: with a core per shard and the same per-question overhead, a question "
        f"costs the slowest shard's search + the overhead, {pq['slowest_shard_search_p50']} + "
        f"{pq['overhead_p50']} ms ({ra['model_core_per_shard_over_in_process']}× in-process's "
        f"{pq['in_process_p50']} ms); the search alone would be "
        f"{ra['model_speedup_core_per_shard_without_overhead']}× faster than in-process.",
        "",
    ]
    return "\n".join(lines)
