"""Exhibit 2, BM25 and the exact word: a search with each question word's contribution, a
k1 × b heat map of train recall@5, and test recall@5 measured once the user commits.

    score(q, d) = Σ_{t ∈ q} idf(t) · tf(t, d) · (k1 + 1) / (tf(t, d) + k1 · (1 − b + b · |d| / avgdl))
    idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))                 (Lucene's BM25)

k1 sets how fast a word's repeats saturate (k1 = 0: one occurrence counts as many; large
k1: nearly linear in tf); b how much a long chunk is penalised (b = 0: not at all; b = 1:
tf divided by the chunk's length relative to the average). Robertson & Zaragoza (2009).

Recall@5 is the BM25 stage's `recall@5` of a `glassrag eval` run with the same k1 and b:
the BM25 retriever of glassrag's Pipeline, its list judged by the evaluator's Judge and
measured by evaluate_run (tests/web/test_lab.py checks it against evaluate() and a sweep).
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.errors import ConfigError, QueryError
from glassrag.lab.base import LabBench, means, qrels_of, retriever_rankings, setting

K1S = (0.3, 0.6, 0.9, 1.2, 1.5, 2.0)
BS = (0.0, 0.2, 0.4, 0.6, 0.75, 0.9, 1.0)
METRIC = "recall@5"
SHOWN = 5  # hits shown for the search


def recall(bench: LabBench, k1: float, b: float, split: str) -> float:
    """The BM25 stage's mean recall@5 on a split at (k1, b), kept per generation."""
    def compute() -> float:
        questions = bench.split(split)
        config = bench.config(bm25={"k1": k1, "b": b})
        ranked = retriever_rankings(bench, config, questions, ["bm25"])["bm25"]
        return means(ranked, qrels_of(bench, questions), [METRIC])[METRIC]

    return bench.remember(("bm25-recall", k1, b, split), compute)


def heat(bench: LabBench) -> dict[str, Any]:
    """Train recall@5 at every (k1, b) of the grid and the best cell (ties: the first)."""
    values = {(i, j): recall(bench, k1, b, "train") for i, k1 in enumerate(K1S) for j, b in enumerate(BS)}
    best = max(values, key=lambda c: (values[c], -c[0], -c[1]))
    return {"k1": list(K1S), "b": list(BS), "values": values, "best": best}


def search(bench: LabBench, question: str, k1: float, b: float) -> dict[str, Any]:
    """The top hits for `question` with each question word's part of the score (BM25.explain)."""
    pipeline = bench.pipeline(bench.config(bm25={"k1": k1, "b": b}))
    try:
        query, _ = pipeline.analyze(question)
    except QueryError as e:
        return {"question": question, "problem": e.problem, "hint": e.hint, "hits": [], "tokens": []}
    with bench.lock:
        ran = pipeline.retrievers["bm25"].run(query, {})
    hits, notes = ran.hits, list(ran.notes)
    position = bench.index.position
    rows = []
    for h in hits[:SHOWN]:
        chunk = bench.index.chunk(h.chunk_id)
        terms = pipeline.bm25.explain(query.tokens, position[h.chunk_id])
        rows.append({"rank": h.rank, "chunk": h.chunk_id, "doc": chunk.doc_id, "locator": chunk.locator,
                     "score": h.score, "text": chunk.text[:240], "terms": terms,
                     "sum": sum(t["contribution"] for t in terms)})
    return {"question": question, "tokens": list(query.tokens), "notes": notes, "hits": rows,
            "avgdl": float(pipeline.bm25.avgdl)}


def costly(bench: LabBench, params: Mapping[str, str]) -> tuple[Any, ...]:
    """(k1, b, commit): another cell is BM25 run over the train split, commit over the test
    split; the question's per-word contributions (`q`) cost one question."""
    own = bench.index.config.bm25
    return (setting(params, "k1", "bm25.k1", own.k1), setting(params, "b", "bm25.b", own.b),
            params.get("commit", "") == "1")


def exhibit(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    bench.needs_questions()
    own = bench.index.config.bm25
    k1 = setting(params, "k1", "bm25.k1", own.k1)
    b = setting(params, "b", "bm25.b", own.b)
    commit = params.get("commit", "")
    if commit not in ("", "0", "1"):
        raise ConfigError(f"commit = {commit[:20]!r} is not 0 or 1", "commit=1 measures the test split once")
    grid = heat(bench)
    question = (params.get("q") or "").strip() or _example(bench)
    return {
        "k1": k1, "b": b, "metric": METRIC, "index_k1": own.k1, "index_b": own.b,
        "train": recall(bench, k1, b, "train"),
        "test": recall(bench, k1, b, "test") if commit == "1" else None,
        "committed": commit == "1",
        "grid": {"k1": grid["k1"], "b": grid["b"], "best": {"k1": K1S[grid["best"][0]], "b": BS[grid["best"][1]],
                                                            "value": grid["values"][grid["best"]]},
                 "cells": [{"k1": K1S[i], "b": BS[j], "value": v} for (i, j), v in grid["values"].items()]},
        "questions": {"train": len([q for q in bench.split("train") if q.answerable]),
                      "test": len([q for q in bench.split("test") if q.answerable])},
        "search": search(bench, question, k1, b),
    }


def _example(bench: LabBench) -> str:
    """An identifier question when there is one (the exact word BM25 is good at)."""
    kinds = [q for q in bench.questions if q.kind == "identifier"] or list(bench.questions)
    return kinds[0].question if kinds else "error E-4107"
