"""Exhibit 4, two rankers beat one: BM25, the embedding and their fusion measured on the test
split, a square per question with a mark for each ranker that has the answer in its first k,
and the three lists of a picked question.

    RRF(d)      = Σ_r 1 / (k + rank_r(d))                                 Cormack et al. (2009)
    weighted(d) = w · ŝ_bm25(d) + (1 − w) · ŝ_emb(d),  ŝ = (s − min) / (max − min)   Bruch et al. (2023)

    R@k  = |relevant ∩ top k| / |relevant|      MRR = 1 / rank of the first relevant (0 past 10)
    nDCG@10 = Σ_{i ≤ 10} gain_i / log2(i + 1), divided by the ideal ordering's

The lists are the stages `bm25`, the embedding's and `fuse` of glassrag's Pipeline with
retrievers [bm25, embedding] and nothing after fusion, run with the LabBench's stage cache
(a change of k or w re-runs the fusion only); the metrics are evaluate_run's, so they equal
the same stages of a `glassrag eval` run with these settings.
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lab.base import RETRIEVAL_ONLY, LabBench, means, number, pipeline_rankings, qrels_of, setting
from glassrag.retrieve import retrievers

METRICS = ("recall@1", "recall@3", "recall@5", "recall@10", "mrr@10", "ndcg@10")
LISTED = 10  # the depth of the lists shown for a picked question


def embedding(bench: LabBench) -> str:
    """The index's embedding retriever: LSA when it has a model, else its first neural one."""
    if bench.index.lsa is not None:
        return "lsa"
    if bench.index.embeddings:
        return next(iter(bench.index.embeddings))
    raise ConfigError(f"index {bench.name!r} has no embedding (no LSA model, no neural vectors)",
                      "build it with an LSA model (the default) to fuse two rankers")


def config_for(bench: LabBench, method: str, k: int, w: float) -> Config:
    """BM25 and the embedding fused by `method`, nothing after fusion."""
    return bench.config(retrieve={"retrievers": ["bm25", embedding(bench)], "observe": []},
                        fuse={"method": method, "k": k, "weight": w}, **RETRIEVAL_ONLY)


def costly(bench: LabBench, params: Mapping[str, str]) -> tuple[Any, ...]:
    """(method, k, w): other fusion settings run the pipeline over the test split; `depth`
    and `pick` only choose what is drawn of a run already made."""
    own = bench.index.config.fuse
    return (setting(params, "method", "fuse.method", own.method), setting(params, "k", "fuse.k", own.k),
            setting(params, "w", "fuse.weight", own.weight))


def exhibit(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    bench.needs_questions()
    own = bench.index.config.fuse
    method = setting(params, "method", "fuse.method", own.method)
    k = setting(params, "k", "fuse.k", own.k)
    w = setting(params, "w", "fuse.weight", own.weight)
    depth = number(params, "depth", 5, 1, 10, whole=True)
    emb = embedding(bench)
    questions = [q for q in bench.split("test") if q.answerable]
    config = config_for(bench, method, k, w)
    with bench.lock:
        ranked, answers = pipeline_rankings(bench, config, questions)
    qrels = qrels_of(bench, questions)
    offered = retrievers(bench.index)  # each named as its entry says, as the settings form names it
    stages = [("bm25", offered["bm25"].title("bm25")), (emb, offered[emb].title(emb)),
              ("fuse", f"fusion ({method})")]
    rows = [{"stage": s, "label": label, "metrics": means(ranked.get(s, {}), qrels, METRICS)} for s, label in stages]
    squares = []
    for q in questions:
        marks = {s: _first_rank(ranked.get(s, {}).get(q.id, [])) for s, _ in stages}
        squares.append({"id": q.id, "question": q.question, "kind": q.kind,
                        "ranks": marks, "lit": {s: r is not None and r <= depth for s, r in marks.items()}})
    pick = params.get("pick") or ""
    if pick and pick not in answers:
        raise ConfigError(f"pick = {pick[:40]!r} is not a test question of this index",
                          "pick one of the squares (a question id such as " + (questions[0].id if questions else "q002") + ")")
    picked = _lists(bench, answers[pick], [s for s, _ in stages], pick) if pick else None
    return {"method": method, "k": k, "w": w, "depth": depth, "embedding": emb, "split": "test",
            "questions": len(questions), "metrics": list(METRICS), "rows": rows,
            "stages": [{"name": s, "label": label} for s, label in stages],
            "squares": squares, "pick": pick or None, "picked": picked,
            "counts": {s: sum(1 for sq in squares if sq["lit"][s]) for s, _ in stages},
            "index_fuse": {"method": own.method, "k": own.k, "weight": own.weight}}


def _first_rank(units: list[str]) -> int | None:
    return next((i for i, u in enumerate(units, 1) if not u.startswith("~")), None)


def _lists(bench: LabBench, answer: Any, stages: list[str], qid: str) -> dict[str, Any]:
    question = next(q for q in bench.questions if q.id == qid)
    relevant = bench.judge.judge(question).relevant_chunks()
    out = {}
    for t in answer.trace:
        if t.name in stages:
            shown = [(h, bench.index.chunk(h.chunk_id)) for h in t.hits[:LISTED]]
            out[t.name] = [{"rank": h.rank, "chunk": h.chunk_id, "doc": c.doc_id, "locator": c.locator,
                            "score": h.score, "relevant": h.chunk_id in relevant} for h, c in shown]
    return {"id": qid, "question": question.question, "lists": out}
