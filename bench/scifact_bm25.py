"""BM25 on BEIR SciFact: glassrag against bm25s and rank_bm25 on the same tokens, in one run.

    python bench/scifact_bm25.py            (or: make bench)

Prints nDCG@10, R@100, MRR@10, indexing time and single-thread queries/second for each,
glassrag's ratios to each, the published numbers, then k1 and b tuned on the train split
by grid search and reported on test once. Writes bench/results/scifact_bm25.json.
"""

from __future__ import annotations

import itertools
import os
import platform
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from common import PUBLISHED, best_of, load_scifact, save, scores  # noqa: E402

from glassrag.lexical.analyze import Analyzer  # noqa: E402
from glassrag.lexical.bm25 import BM25, TermCounts  # noqa: E402

K = 100
K1, B = 0.9, 0.4


def glassrag_run(doc_ids, doc_tokens, query_tokens, k1, b):
    def index():
        return BM25(TermCounts.build(doc_tokens), k1=k1, b=b)

    index_s, model = best_of(index)

    def search():
        return [model.search(q, K)[0] for q in query_tokens]

    search_s, hits = best_of(search)
    run = {qid: [doc_ids[i] for i in idx] for qid, idx in zip(QIDS, hits)}
    return index_s, search_s, run


def bm25s_run(doc_ids, doc_tokens, query_tokens, k1, b):
    import bm25s

    def index():
        model = bm25s.BM25(method="lucene", k1=k1, b=b)
        model.index(doc_tokens, show_progress=False)
        return model

    index_s, model = best_of(index)
    vocab = model.vocab_dict
    known = [[t for t in q if t in vocab] or [next(iter(vocab))] for q in query_tokens]

    def search():
        return model.retrieve(known, k=K, show_progress=False, n_threads=1, return_as="documents")

    search_s, hits = best_of(search)
    run = {qid: [doc_ids[i] for i in row] for qid, row in zip(QIDS, np.asarray(hits))}
    return index_s, search_s, run


def rank_bm25_run(doc_ids, doc_tokens, query_tokens, k1, b):
    from rank_bm25 import BM25Okapi

    index_s, model = best_of(lambda: BM25Okapi(doc_tokens, k1=k1, b=b), repeats=1)

    def search():
        return [np.argsort(-model.get_scores(q), kind="stable")[:K] for q in query_tokens]

    search_s, hits = best_of(search, repeats=1)
    run = {qid: [doc_ids[i] for i in idx] for qid, idx in zip(QIDS, hits)}
    return index_s, search_s, run


def main() -> None:
    global QIDS
    analyzer = Analyzer(stopwords="lucene")  # the BEIR baselines' list, as bm25s uses
    doc_ids, doc_texts, qids, qtexts, qrels = load_scifact("test")
    doc_tokens = [analyzer(t) for t in doc_texts]
    query_tokens = [analyzer(t) for t in qtexts]
    QIDS = qids
    print(f"SciFact test: {len(doc_ids)} documents, {len(qids)} queries; tokens: glassrag Analyzer "
          f"{analyzer.params()}; k1={K1}, b={B}; top {K}; {platform.python_version()}, "
          f"{os.cpu_count()} cores, 1 thread")
    systems = {"glassrag": glassrag_run, "bm25s (lucene)": bm25s_run, "rank_bm25 (Okapi)": rank_bm25_run}
    rows = {}
    for name, fn in systems.items():
        index_s, search_s, run = fn(doc_ids, doc_tokens, query_tokens, K1, B)
        rows[name] = {**scores(run, qrels), "index_s": index_s, "qps": len(qids) / search_s}
    g = rows["glassrag"]
    header = f"{'system':<22}{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}{'index s':>9}{'q/s':>9}" \
             f"{'nDCG ratio':>11}{'q/s ratio':>10}{'index ratio':>12}"
    print(header)
    for name, r in rows.items():
        print(f"{name:<22}{r['ndcg@10']:>9.4f}{r['recall@100']:>8.4f}{r['mrr@10']:>8.4f}"
              f"{r['index_s']:>9.3f}{r['qps']:>9.0f}{g['ndcg@10'] / r['ndcg@10']:>11.3f}"
              f"{g['qps'] / r['qps']:>10.2f}{r['index_s'] / g['index_s']:>12.2f}")
    print("(ratios are glassrag ÷ system for nDCG and q/s, system ÷ glassrag for index time: "
          "above 1 means glassrag is better)")
    for name, p in PUBLISHED.items():
        if "BM25" in name:
            print(f"{'published: ' + name:<46} nDCG@10 {p['ndcg@10']:.4f}"
                  + (f"  R@100 {p['recall@100']:.4f}" if "recall@100" in p else ""))

    # tune k1, b on train; report test once
    tr_ids, _, tr_qids, tr_texts, tr_qrels = load_scifact("train")
    tr_tokens = [analyzer(t) for t in tr_texts]
    counts = TermCounts.build(doc_tokens)
    grid = list(itertools.product([0.5, 0.7, 0.9, 1.2, 1.5, 2.0], [0.2, 0.4, 0.6, 0.75, 0.9]))
    best = None
    for k1, b in grid:
        model = BM25(counts, k1=k1, b=b)
        run = {q: [doc_ids[i] for i in model.search(t, K)[0]] for q, t in zip(tr_qids, tr_tokens)}
        nd = scores(run, tr_qrels, ["ndcg@10"])["ndcg@10"]
        if best is None or nd > best[0]:
            best = (nd, k1, b)
    _, k1, b = best
    model = BM25(counts, k1=k1, b=b)
    test = scores({q: [doc_ids[i] for i in model.search(t, K)[0]] for q, t in zip(qids, query_tokens)}, qrels)
    print(f"tuned on train ({len(tr_qids)} queries, {len(grid)} settings): k1={k1}, b={b} "
          f"(train nDCG@10 {best[0]:.4f}) -> test nDCG@10 {test['ndcg@10']:.4f}, "
          f"R@100 {test['recall@100']:.4f}, MRR@10 {test['mrr@10']:.4f}")
    path = save("scifact_bm25", {"k1": K1, "b": B, "systems": rows,
                                 "tuned": {"k1": k1, "b": b, "train_ndcg@10": best[0], "test": test}})
    print(f"written {path.relative_to(path.parents[2])}")


if __name__ == "__main__":
    main()
