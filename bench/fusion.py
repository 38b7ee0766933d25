"""glassrag's fused stage against a plain hybrid of the same two retrievers, same run.

    python bench/fusion.py --index .glassrag/scifact-minilm --golden ../shared/bench/scifact
    python bench/fusion.py --index .glassrag/demo-minilm --golden src/glassrag/data/demo/golden.jsonl

(indexes built with `glassrag ingest ... --embedder minilm`). The plain hybrid is what a
user would write by hand: every chunk's BM25 score and MiniLM cosine, each min-max
normalised over the whole corpus, w · BM25 + (1 − w) · cosine, ranked. Beside it, from
the same per-question score vectors and lists:

- glassrag's weighted fusion as the pipeline runs it (each retriever's top `depth` hits,
  real scores for candidates missing from a list, corpus-wide min and max);
- the fusion of glassrag ≤ 0.1.0 (each list min-max normalised on its own, a candidate
  missing from a list scored 0), the cause of the gap this benchmark was written for;
- RRF (k = 60).

The weight is chosen on the train split (ndcg@10 for BEIR, hit@5 for a golden set) for
each method; the test split is evaluated once. Results go to bench/results/fusion-NAME.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from glassrag.dense.exact import ExactCosine
from glassrag.evaluate.metrics import evaluate_run, mean_of
from glassrag.evaluate.relevance import Judge
from glassrag.fuse import RRF, Weighted
from glassrag.fuse.base import ScoreSource
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.schema import Hit
from glassrag.store import EmbeddedStore

sys.path.insert(0, os.path.dirname(__file__))
from common import save  # noqa: E402

WEIGHTS = [round(w, 2) for w in np.arange(0.3, 0.81, 0.05)]
DEPTH = 100


def load_questions(golden: Path, index):
    from glassrag.evaluate.questions import load_questions as load

    return load(golden, "all", index.documents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--golden", required=True)
    parser.add_argument("--name", help="results name (default: the index folder's name)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    index = EmbeddedStore(args.index).read()
    neural = next(iter(index.embeddings))
    from glassrag.dense.neural import SentenceEmbedder

    p = index.embeddings[neural].params
    embedder = SentenceEmbedder(p["model"], p["query_instruction"], p["passage_instruction"], p["quantize"],
                                p["batch_size"], p.get("max_seq_length"))
    vectors = index.embeddings[neural].vectors
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    bm25 = BM25(index.counts, index.config.bm25.k1, index.config.bm25.b)
    questions = [q for q in load_questions(Path(args.golden), index) if q.answerable]
    judge = Judge(index.chunks)
    ids = [c.id for c in index.chunks]
    position = index.position
    beir = all(d.format == "beir" for d in index.documents.values())
    metric = "ndcg@10" if beir else "hit@5"

    t0 = time.perf_counter()
    per_q = []
    for q in questions:
        lexical = bm25.score_all(index.analyzer(q.question)).astype(np.float64)
        cosine = (vectors @ embedder.embed_query(q.question)).astype(np.float64)
        per_q.append((q, lexical, cosine))
    encode_s = time.perf_counter() - t0

    def hits(stage: str, scores: np.ndarray) -> list[Hit]:
        """The retriever's list as the pipeline makes it: BM25's positive scores, the top cosines."""
        idx = top_k(scores, DEPTH)[0] if stage == "bm25" else ExactCosine.top(scores, DEPTH)[0]
        return [Hit(ids[i], float(scores[i]), r, stage) for r, i in enumerate(idx.tolist(), 1)]

    def source(scores: np.ndarray) -> ScoreSource:
        return ScoreSource(lambda cs: scores[[position[c] for c in cs]], float(scores.min()), float(scores.max()))

    def mm(x: np.ndarray) -> np.ndarray:
        return (x - x.min()) / (x.max() - x.min()) if x.max() > x.min() else np.ones_like(x)

    lists = {q.id: {"bm25": hits("bm25", lex), neural: hits(neural, cos)} for q, lex, cos in per_q}
    methods = {
        "plain hybrid (whole corpus)": lambda q, lex, cos, w: [
            ids[i] for i in ExactCosine.top(w * mm(lex) + (1 - w) * mm(cos), DEPTH)[0].tolist()],
        "glassrag weighted": lambda q, lex, cos, w: [h.chunk_id for h in Weighted(w, DEPTH).fuse(
            lists[q.id], {"bm25": source(lex), neural: source(cos)})],
        "glassrag 0.1.0 weighted (per list, missing = 0)": lambda q, lex, cos, w: [
            h.chunk_id for h in Weighted(w, DEPTH).fuse(lists[q.id])],
    }

    def score(ranked: dict[str, list[str]], split: str) -> dict[str, float]:
        qrels, run = {}, {}
        for q, _, _ in per_q:
            if q.split != split and split != "all":
                continue
            j = judge.judge(q)
            qrels[q.id] = dict(j.units)
            run[q.id] = j.ranked_units(ranked[q.id])
        per = evaluate_run(run, qrels, ["ndcg@10", "hit@5", "hit@1", "mrr@10", "recall@100"])
        return {name: mean_of(v) for name, v in per.items()}

    results = {}
    for name, fn in methods.items():
        by_w = {}
        for w in WEIGHTS:
            ranked = {q.id: fn(q, lex, cos, w) for q, lex, cos in per_q if q.split == "train"}
            by_w[w] = score(ranked, "train")[metric]
        best = max(WEIGHTS, key=lambda w: (round(by_w[w], 6), -abs(w - 0.5)))
        test = {}
        for w in sorted({best, 0.5}):
            ranked = {q.id: fn(q, lex, cos, w) for q, lex, cos in per_q if q.split == "test"}
            test[str(w)] = score(ranked, "test")
        results[name] = {"train": {str(w): v for w, v in by_w.items()}, "best_w": best, "test": test}
    rrf = {q.id: [h.chunk_id for h in RRF(60, DEPTH).fuse(lists[q.id])] for q, _, _ in per_q if q.split == "test"}
    results["RRF (k 60)"] = {"test": {"-": score(rrf, "test")}}
    for single in ("bm25", neural):
        ranked = {t[0].id: [h.chunk_id for h in lists[t[0].id][single]] for t in per_q if t[0].split == "test"}
        results[single] = {"test": {"-": score(ranked, "test")}}

    print(f"{args.index}: {len(questions)} answerable questions, metric that picks w on train: {metric}")
    print(f"{'method':48s} {'w':>5s}  ndcg@10  hit@1  hit@5  mrr@10  R@100   (test)")
    for name, r in results.items():
        for w, m in r["test"].items():
            mark = " (best on train)" if str(r.get("best_w")) == w else ""
            print(f"{name:48s} {w:>5s}  {m['ndcg@10']:.4f}  {m['hit@1']:.3f}  {m['hit@5']:.3f}  "
                  f"{m['mrr@10']:.4f}  {m['recall@100']:.4f}{mark}")
    import importlib.metadata as md

    path = save(f"fusion-{args.name or Path(args.index).name}", {
        "index": args.index, "golden": args.golden, "metric": metric, "weights": WEIGHTS, "depth": DEPTH,
        "results": results, "encode_seconds": round(encode_s, 1),
        "versions": {p: md.version(p) for p in ("numpy", "scipy", "sentence-transformers", "torch")},
        "machine": platform.platform(), "code_version": __import__("glassrag.provenance", fromlist=["x"]).code_version()})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
