"""Exhibit 5, a second look at the top 20: the learned reranker trained in place on the
train split (evaluate/tune.train_reranker, the function behind `glassrag rerank-train`),
its weight per feature, top-1 / P@3 / R@5 / MRR before and after it on both splits, and an
MMR λ that shows when an outdated copy falls out of the top three.

    p(relevant | x) = σ(w · z + c),  z = (x − μ) / s
    minimise (1/n) Σ_i log(1 + exp(−y_i (w · z_i + c))) + (λ / 2n) ‖w‖²        (L2, λ = l2)

fitted by L-BFGS (a quasi-Newton method: it chooses its own step from the gradient's
history, so there is no learning rate to set). MMR (Carbonell & Goldstein 1998):

    next = argmax_{d ∉ S} λ · rel(q, d) − (1 − λ) · max_{s ∈ S} sim(d, s)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from glassrag.config import Config
from glassrag.errors import ConfigError, QueryError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.tune import reranker_model, reranker_rows
from glassrag.lab.base import LabBench, choice, means, number, qrels_of, setting
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.rerank.features import FeatureMaker
from glassrag.rerank.learned import LearnedReranker
from glassrag.schema import Hit
from glassrag.store.base import Index

METRICS = ("hit@1", "precision@3", "recall@5", "mrr@10")
LAMBDAS = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1)
L2S = (0.01, 0.1, 1.0, 10.0, 100.0)


def before_config(bench: LabBench) -> Config:
    """The settings whose list the reranker receives (as train_reranker runs them)."""
    return bench.config(rerank={"method": "none"}, mmr={"relevance": None}, cap={"per_document": 0},
                        gate={"enabled": False})


def trained(bench: LabBench, l2: float) -> tuple[dict[str, Any], Index]:
    """The model fitted on the train split's rows (tune.reranker_rows, made once) with penalty
    `l2` by tune.reranker_model, as `glassrag rerank-train` does with l2 = 1; and the index holding it."""
    def compute() -> tuple[dict[str, Any], Index]:
        x, y, n = bench.remember(("rerank-rows",), lambda: reranker_rows(
            bench.index, bench.index.config, list(bench.questions), bench.golden))
        model = reranker_model(x, y, n, bench.index.config, bench.golden, l2)
        return model, replace(bench.index, extra={**bench.index.extra, "reranker": model})

    return bench.remember(("rerank-model", l2), compute)


def reranked_config(bench: LabBench, mmr: float | None = None, versions: str | None = None) -> Config:
    """The index's settings with the learned reranker and nothing after it (MMR when asked)."""
    return bench.config(rerank={"method": "learned"}, gate={"enabled": False}, cap={"per_document": 0},
                        mmr={"relevance": mmr},
                        **({"versions": {"mode": versions}} if versions else {}))


def inputs(bench: LabBench, split: str) -> list[tuple[Question, Query, list[Hit], str]]:
    """Each answerable question of the split with its analysed query, the list the reranker
    receives (`Pipeline.input_of("rerank")`, as tune.reranker_rows reads it) and that stage's name."""
    def compute() -> list[tuple[Question, Query, list[Hit], str]]:
        pipeline = bench.pipeline(before_config(bench))
        out = []
        for q in bench.split(split):
            if not q.answerable:
                continue
            try:
                answer = pipeline.run(q.question)
            except QueryError:
                continue  # evaluate() records no list: the question scores 0
            ranked = answer.stage(pipeline.input_of("rerank"))
            out.append((q, Query(q.question, bench.index.analyzer(q.question)), list(ranked.hits), ranked.name))
        return out

    return bench.remember(("rerank-inputs", split), compute)


def orders(bench: LabBench, model: dict[str, Any], split: str) -> dict[str, Any]:
    """METRICS of the list the reranker receives ("fused") and of the LearnedReranker stage's
    output with this model ("reranked"), over the split's answerable questions."""
    rows = inputs(bench, split)
    config = bench.index.config.rerank
    features = bench.remember(("rerank-features",), lambda: FeatureMaker(
        bench.index, bench.pipeline(before_config(bench)).bm25))
    reranker = LearnedReranker(model, features, config.pool, config.neighbours)
    fused: dict[str, list[str]] = {}
    reranked: dict[str, list[str]] = {}
    for q, query, hits, _ in rows:
        judgement = bench.judge.judge(q)
        fused[q.id] = judgement.ranked_units([h.chunk_id for h in hits])
        out, _ = reranker.apply(query, list(hits))
        reranked[q.id] = judgement.ranked_units([h.chunk_id for h in out])
    questions = [q for q in bench.split(split) if q.answerable]
    qrels = qrels_of(bench, questions)
    return {"fused": means(fused, qrels, METRICS), "reranked": means(reranked, qrels, METRICS),
            "input_stage": rows[0][3] if rows else "", "questions": len(questions)}


def outdated(bench: LabBench, index: Index, qid: str) -> dict[str, Any]:
    """For one question, the top three after MMR at each λ (versions off, so the effect is
    MMR's alone), and whether a superseded document's chunk is among them."""
    question = next((q for q in bench.questions if q.id == qid), None)
    if question is None:
        raise ConfigError(f"q = {qid[:40]!r} is not a labelled question of this index",
                          "give a question id such as " + (bench.questions[0].id if bench.questions else "q073"))
    superseded = index.superseded()
    rows = []
    for lam in LAMBDAS:
        pipeline = Pipeline(index, reranked_config(bench, None if lam == 1.0 else lam, "off"), bench.cache)
        answer = pipeline.run(question.question)
        last = [t for t in answer.trace if t.kind in ("rerank", "mmr")]
        hits = (last[-1] if last else answer.trace[-1]).hits[:3]
        chunks = [index.chunk(h.chunk_id) for h in hits]
        top = [{"doc": c.doc_id, "locator": c.locator, "outdated": c.doc_id in superseded} for c in chunks]
        rows.append({"lambda": lam, "top": top, "outdated_in_top3": any(t["outdated"] for t in top)})
    out_at = next((r["lambda"] for r in rows if not r["outdated_in_top3"]), None)
    return {"id": qid, "question": question.question, "rows": rows, "falls_out_at": out_at,
            "superseded": dict(superseded)}


def costly(bench: LabBench, params: Mapping[str, str]) -> float:
    """The penalty l2: another is a reranker trained on the train split and run on both splits;
    `mmr` picks a row already computed, `split` a part of the default's table, `q` one question."""
    return number(params, "l2", 1.0, 1e-4, 1e4)


def exhibit(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    bench.needs_questions()
    l2 = number(params, "l2", 1.0, 1e-4, 1e4)
    lam = setting(params, "mmr", "mmr.relevance", 1.0)
    lam = 1.0 if lam is None else lam  # "off": relevance alone
    split = choice(params, "split", "both", ("both", "train", "test"))
    model, index = trained(bench, l2)
    table = []
    with bench.lock:
        for s in (("train", "test") if split == "both" else (split,)):
            got = bench.remember(("rerank-orders", l2, s), lambda: orders(bench, model, s))
            for order in ("fused", "reranked"):
                table.append({"split": s, "order": order, "stage": got["input_stage"] if order == "fused" else "rerank",
                              "questions": got["questions"], "metrics": got[order]})
        old = [q for q in bench.questions if q.kind == "outdated"]
        mmr = None
        if params.get("q"):
            mmr = bench.remember(("rerank-mmr", l2, params["q"]), lambda: outdated(bench, index, params["q"]))
        else:  # the first outdated question whose old copy reaches the top three without MMR
            for q in old:
                mmr = bench.remember(("rerank-mmr", l2, q.id), lambda: outdated(bench, index, q.id))
                if mmr["rows"][0]["outdated_in_top3"]:
                    break
    here = None
    if mmr is not None:
        here = min(mmr["rows"], key=lambda r: abs(r["lambda"] - lam))
    return {"l2": l2, "l2_choices": list(L2S), "mmr": lam, "metrics": list(METRICS), "table": table,
            "model": {"features": model["features"], "weights": model["weights"], "bias": model["bias"],
                      "rows": model["rows"], "positives": model["positives"], "questions": model["questions"],
                      "pool": model["pool"], "l2": model["l2"], "optimizer": "L-BFGS-B (no learning rate)"},
            "outdated": mmr, "at_lambda": here,
            "outdated_questions": [{"id": q.id, "question": q.question} for q in old]}
