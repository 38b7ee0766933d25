"""Neural dense retrieval on BEIR SciFact: BM25, LSA, all-MiniLM-L6-v2, and BM25 + MiniLM
fused (RRF, and min-max weighted fusion with the weight tuned on the train split), with
the encoding speed of plain sentence-transformers against glassrag's embedder, in one run.

    python bench/scifact_neural.py --encode   (about 12 minutes on 2 cores, most of it the three
                                              encodings of the corpus: 227 s, 225 s and 122 s in
                                              bench/results/scifact_neural_encode.log; writes
                                              bench/results/scifact_neural.json)
    python bench/scifact_neural.py            (reuses the vectors in bench/out/)

BM25 uses Lucene's stopword list and k1 = 0.9, b = 0.4 on the same tokens as the
published baselines. MiniLM encodes title + " " + text, no instruction (its family was
trained without one), unit-length vectors, exact cosine. Encoded corpora are kept in
bench/out/ so a second run skips encoding unless --encode is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from common import PUBLISHED, ROOT, best_of, load_scifact, save, scores  # noqa: E402

from glassrag.dense.ann import HNSWCosine  # noqa: E402
from glassrag.dense.exact import ExactCosine  # noqa: E402
from glassrag.dense.lsa import LSA  # noqa: E402
from glassrag.dense.neural import SentenceEmbedder, one_blas_thread  # noqa: E402
from glassrag.fuse import make_fuser  # noqa: E402
from glassrag.lexical.analyze import Analyzer  # noqa: E402
from glassrag.lexical.bm25 import BM25, TermCounts  # noqa: E402
from glassrag.schema import Hit  # noqa: E402

OUT = ROOT / "bench" / "out"
K = 100


def hits(stage: str, doc_ids: list[str], idx: np.ndarray, vals: np.ndarray) -> list[Hit]:
    return [Hit(doc_ids[i], float(s), r, stage) for r, (i, s) in enumerate(zip(idx, vals), 1)]


def encode(label: str, fn, texts: list[str], force: bool) -> tuple[np.ndarray, float | None]:
    """Vectors from bench/out when there (time None: the last --encode run's times are in
    bench/results/scifact_neural_encode.log), else encoded and timed."""
    path = OUT / f"scifact-{label}.npy"
    if path.exists() and not force:
        return np.load(path), None
    t0 = time.perf_counter()
    vectors = fn(texts)
    seconds = time.perf_counter() - t0
    OUT.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--encode", action="store_true", help="re-encode even when bench/out has vectors")
    args = parser.parse_args()
    os.environ["HF_HUB_OFFLINE"] = "1"
    import torch

    torch.set_num_threads(os.cpu_count() or 1)
    doc_ids, texts, qids, qtexts, qrels = load_scifact("test")
    _, _, tr_qids, tr_texts, tr_qrels = load_scifact("train")
    print(f"SciFact: {len(texts)} documents, {len(qids)} test and {len(tr_qids)} train queries; "
          f"torch {torch.__version__}, {torch.get_num_threads()} threads")

    # -- encoding speed: the same model three ways ------------------------------------------
    from sentence_transformers import SentenceTransformer

    plain_model = SentenceTransformer(str(SentenceEmbedder("minilm").path), device="cpu")
    fp32 = SentenceEmbedder("minilm")
    int8 = SentenceEmbedder("minilm", quantize="int8")
    timing = {}
    plain_vecs, timing["plain sentence-transformers (fp32)"] = encode(
        "plain", lambda t: plain_model.encode(t, batch_size=32, normalize_embeddings=True,
                                              convert_to_numpy=True), texts, args.encode)
    ours_vecs, timing["glassrag embedder fp32"] = encode("fp32", fp32.embed_passages, texts, args.encode)
    int8_vecs, timing["glassrag embedder int8"] = encode("int8", int8.embed_passages, texts, args.encode)

    # -- retrieval ------------------------------------------------------------------------------
    analyzer = Analyzer(stopwords="lucene")
    counts = TermCounts.build([analyzer(t) for t in texts])
    bm25 = BM25(counts, k1=0.9, b=0.4)
    lsa = LSA(dim=128).fit(counts)
    lsa_search = ExactCosine(lsa.passage_vectors)

    def lexical(q: str) -> list[Hit]:
        return hits("bm25", doc_ids, *bm25.search(analyzer(q), K))

    def latent(q: str) -> list[Hit]:
        idx, s, _ = lsa_search.search(lsa.embed_tokens(analyzer(q)), K)
        return hits("lsa", doc_ids, idx, s)

    def neural_runner(vectors: np.ndarray, embedder: SentenceEmbedder):
        search = ExactCosine(vectors)

        def run(q: str) -> list[Hit]:
            vector = embedder.embed_query(q)
            with one_blas_thread():  # as the pipeline does: see glassrag/dense/neural.py
                idx, s, _ = search.search(vector, K)
            return hits("minilm", doc_ids, idx, s)
        return run

    minilm = neural_runner(ours_vecs, fp32)
    minilm8 = neural_runner(int8_vecs, int8)

    def collect(runner, questions):
        return [runner(q) for q in questions]

    lists = {name: {split: collect(fn, qs) for split, qs in (("test", qtexts), ("train", tr_texts))}
             for name, fn in (("bm25", lexical), ("lsa", latent), ("minilm", minilm), ("minilm-int8", minilm8))}

    def as_run(ids, ranked_lists):
        return {q: [h.chunk_id for h in hl] for q, hl in zip(ids, ranked_lists)}

    def fused(method: str, split: str, neural: str = "minilm", **params):
        fuser = make_fuser(method, depth=K, **params)
        return [fuser.fuse({"bm25": a, neural: b}) for a, b in zip(lists["bm25"][split], lists[neural][split])]

    # weight tuned on train only
    grid = [round(w, 2) for w in np.arange(0.1, 0.95, 0.1)]
    train_nd = {w: scores(as_run(tr_qids, fused("weighted", "train", weight=w)), tr_qrels, ["ndcg@10"])["ndcg@10"]
                for w in grid}
    w_best = max(grid, key=lambda w: (train_nd[w], -abs(w - 0.5)))
    rows = {
        "BM25 (k1 0.9, b 0.4, Lucene stopwords)": as_run(qids, lists["bm25"]["test"]),
        "LSA (128 dimensions)": as_run(qids, lists["lsa"]["test"]),
        "MiniLM (exact cosine)": as_run(qids, lists["minilm"]["test"]),
        "MiniLM int8": as_run(qids, lists["minilm-int8"]["test"]),
        "BM25 + MiniLM, RRF (k 60)": as_run(qids, fused("rrf", "test", k=60)),
        f"BM25 + MiniLM, weighted (w {w_best}, tuned on train)": as_run(qids, fused("weighted", "test", weight=w_best)),
        f"BM25 + MiniLM int8, weighted (w {w_best})": as_run(qids, fused("weighted", "test", "minilm-int8", weight=w_best)),
    }
    results = {name: scores(run, qrels) for name, run in rows.items()}
    print(f"\n{'system (test split)':<52}{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}")
    for name, r in results.items():
        print(f"{name:<52}{r['ndcg@10']:>9.4f}{r['recall@100']:>8.4f}{r['mrr@10']:>8.4f}")
    for name, p in PUBLISHED.items():
        print(f"{'published: ' + name:<52}{p['ndcg@10']:>9.4f}" + (f"{p['recall@100']:>8.4f}" if "recall@100" in p else ""))
    print("weighted fusion on train, nDCG@10 by weight of BM25: "
          + ", ".join(f"{w}: {v:.4f}" for w, v in train_nd.items()))

    print(f"\n{'encoding the corpus':<40}{'seconds':>9}{'docs/s':>9}{'speed-up':>10}")
    base = timing["plain sentence-transformers (fp32)"]
    for name, sec in timing.items():
        if sec is None:
            print(f"{name:<40}{'(cached; run with --encode)':>28}")
        else:
            print(f"{name:<40}{sec:>9.1f}{len(texts) / sec:>9.1f}{(base / sec if base else float('nan')):>10.2f}")
    agreement = float(np.mean(np.sum(plain_vecs * ours_vecs, axis=1)))
    print(f"mean cosine between plain and glassrag fp32 vectors: {agreement:.6f}; "
          f"int8 against fp32: {float(np.mean(np.sum(int8_vecs * ours_vecs, axis=1))):.4f}")

    # -- a query end to end: encode, BM25, cosine, fuse ------------------------------------------
    fuser = make_fuser("weighted", weight=w_best, depth=K)
    def one(q: str) -> None:
        fuser.fuse({"bm25": lexical(q), "minilm": minilm(q)})
    per_query, _ = best_of(lambda: [one(q) for q in qtexts[:100]], repeats=2)
    enc, _ = best_of(lambda: [fp32.embed_query(q) for q in qtexts[:100]], repeats=2)
    print(f"\none query end to end (BM25 + MiniLM weighted, exact): {per_query * 10:.1f} ms, "
          f"of which encoding the question {enc * 10:.1f} ms (mean of 100 test queries)")

    # -- HNSW against exact ---------------------------------------------------------------
    exact, hnsw = ExactCosine(ours_vecs), HNSWCosine(ours_vecs)
    qv = np.stack([fp32.embed_query(q) for q in qtexts])
    recall = {}
    for k in (10, 100):
        recall[k] = float(np.mean([len(set(exact.search(v, k)[0]) & set(hnsw.search(v, k)[0])) / k for v in qv]))
    t_exact, _ = best_of(lambda: [exact.search(v, 100) for v in qv])
    t_hnsw, _ = best_of(lambda: [hnsw.search(v, 100) for v in qv])
    print(f"HNSW (M 32, efSearch 128) against exact search: recall@10 {recall[10]:.4f}, recall@100 "
          f"{recall[100]:.4f}; {len(qv) / t_hnsw:.0f} against {len(qv) / t_exact:.0f} queries/s "
          f"(at 5,183 vectors exact search is cheap: HNSW pays off on large corpora)")

    path = save("scifact_neural", {"results": results, "train_weighted_ndcg": train_nd, "weight": w_best,
                                   "encoding_seconds": timing, "agreement": agreement,
                                   "query_ms": per_query * 10, "query_encode_ms": enc * 10,
                                   "hnsw_recall": recall})
    print(f"written {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
