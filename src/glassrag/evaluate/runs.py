"""One evaluation run: every question through the pipeline once, metrics for every stage
from the trace, intervals, and the cause of every miss. The run is a JSON file
(docs/run-format.md) that `compare`, the web UI and TREC export read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glassrag import __version__
from glassrag.errors import DiskError, QueryError
from glassrag.evaluate.diagnose import CAUSES, loss_cause
from glassrag.evaluate.fits import calibration_record
from glassrag.evaluate.golden import Question, locator_matches
from glassrag.evaluate.grade import SCORES, grade
from glassrag.evaluate.metrics import evaluate_run
from glassrag.evaluate.relevance import Judge, Judgement, quote_correct, visible
from glassrag.stats import mean_interval, wilson_interval
from glassrag.generate import REFUSED
from glassrag.generate.prompt import Given
from glassrag.store.pgschema import redact
from glassrag.pipeline import Pipeline
from glassrag.provenance import code_version, provenance
from glassrag.schema import (RANKING_KINDS, RUN_FORMAT, RUN_FORMAT_VERSION, Answer, Generation, Run,
                             RunSection)

BINARY = ("hit", "top1", "answer_visible", "answer_intact", "declined", "answered", "vector_hit",
          # a generated answer's 0/1 scores (evaluate/grade.py)
          "foreign_citations", "leaked_tags", "cited", "refused_unanswerable", "refused_answerable",
          "hedged", "contains_answer", "failed")


DENSE = ("vector_hit", "mean_top_similarity")  # a dense stage's own figures


def dense_figures(stage: Mapping[str, Any]) -> dict[str, float]:
    """A dense stage's figures on one question: did it return anything (a cutoff can leave it
    empty), and the cosine of its best passage (0 when it returned nothing)."""
    return {"vector_hit": float(stage.get("top_score") is not None),
            "mean_top_similarity": float(stage.get("top_score") or 0.0)}


def stage_metric_names(k: int) -> list[str]:
    """Ranking metrics computed for every stage that ranks chunks."""
    return list(dict.fromkeys(["hit@1", f"hit@{k}", f"recall@{k}", f"precision@{k}", "mrr@10",
                               "ndcg@10", "recall@100", "hit@10"]))


def interval(name: str, values: Sequence[float]) -> dict[str, Any]:
    """{value, low, high, n}: Wilson 95 % for 0/1 outcomes, bootstrap 95 % for means."""
    n = len(values)
    if n == 0:
        return {"value": None, "low": None, "high": None, "n": 0}
    mean = float(np.mean(values))
    if name.split("@")[0] in BINARY or name.startswith("declined") or name.startswith("answered"):
        low, high = wilson_interval(int(round(sum(values))), n)
    else:
        low, high = mean_interval(list(values), resamples=2000, seed=0)
    return {"value": mean, "low": float(low), "high": float(high), "n": n}


def evaluate(pipeline: Pipeline, questions: Sequence[Question], golden_path: str = "",
             split: str = "all", index_path: str = "",
             progress: Callable[[int, int], None] | None = None, judge: Judge | None = None) -> Run:
    """Run every question once and measure every stage (`judge`: one already made for this
    index, as a sweep shares among its configurations)."""
    index = pipeline.index
    judge = judge or Judge(index.chunks)
    k = pipeline.config.answer.k
    names = stage_metric_names(k)
    started = time.perf_counter()
    records: list[dict[str, Any]] = []
    titles = [d.title for d in index.documents.values()]
    ranked: dict[str, dict[str, list[str]]] = {}  # stage -> question -> ranked units
    qrels: dict[str, dict[str, int]] = {}
    for n, q in enumerate(questions, 1):
        judgement = judge.judge(q)
        if q.answerable:
            qrels[q.id] = dict(judgement.units)
        try:
            answer = pipeline.run(q.question)
        except QueryError as err:
            answer = Answer(q.question, None, (), True, f"query refused: {err.problem}", ())
        records.append(_record(q, judgement, answer, k, lambda cid: index.chunk(cid).doc_id))
        if answer.generation is not None:
            records[-1]["generation"] = generation_record(q, answer.generation, titles, index.analyzer)
        for t in answer.trace:
            if t.hits:
                ranked.setdefault(t.name, {})[q.id] = judgement.ranked_units(
                    [h.chunk_id for h in t.hits])
        if progress:
            progress(n, len(questions))
    elapsed = time.perf_counter() - started

    stage_order = list(dict.fromkeys(s for r in records for s in r["stages"]))
    stages: dict[str, dict[str, Any]] = {}
    per_question: dict[str, dict[str, dict[str, float]]] = {}
    kinds_of = {t: r["stages"][t]["kind"] for r in records for t in r["stages"]}
    by_q = {r["id"]: r for r in records}
    for stage in stage_order:
        # the answer stage holds only k passages: measure it only to depth k
        stage_names = names if kinds_of[stage] != "select" else [
            "hit@1", f"hit@{k}", f"recall@{k}", f"mrr@{k}", f"ndcg@{k}"]
        values = evaluate_run(ranked.get(stage, {}), qrels, stage_names)
        per_question[stage] = values
        stages[stage] = {name: interval(name, list(v.values())) for name, v in values.items()}
        src = [by_q[qid]["stages"][stage]["source_recall"] for qid in qrels
               if stage in by_q[qid]["stages"]]
        stages[stage][f"source_recall@{k}"] = interval("source_recall", src)
        dense = [by_q[qid]["stages"][stage] for qid in by_q
                 if stage in by_q[qid]["stages"] and by_q[qid]["stages"][stage].get("family") == "dense"]
        if dense:  # over every question that reached the stage, answerable or not
            for name in DENSE:
                stages[stage][name] = interval(name, [dense_figures(d)[name] for d in dense])

    ranking = _ranking_stage(records)
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    sections = {"ranking": (ranking, [*names, f"source_recall@{k}"]),
                "answer": ("answer", ["hit@1", f"hit@{k}", f"recall@{k}", f"mrr@{k}", f"ndcg@{k}",
                                      f"source_recall@{k}"])}
    summary: dict[str, dict[str, Any]] = {key: {} for key in sections}
    for r in records:
        r["metrics"] = {key: {} for key in sections}
    for key, (stage, wanted) in sections.items():
        for name in wanted:
            if stage in stages and name in stages[stage]:
                summary[key][name] = stages[stage][name]
                for r in answerable:
                    if name.startswith("source_recall"):
                        value = r["stages"][stage]["source_recall"] if stage in r["stages"] else 0.0
                    else:
                        value = per_question.get(stage, {}).get(name, {}).get(r["id"], 0.0)
                    r["metrics"][key][name] = value

    def add(key: str, name: str, group: list[dict[str, Any]], value: Callable[[dict[str, Any]], float],
            kind: str) -> None:
        summary[key][name] = interval(kind, [value(r) for r in group])
        for r in group:
            r["metrics"][key][name] = value(r)

    add("ranking", "answer_intact", answerable, lambda r: float(r["intact"]), "answer_intact")
    labelled = [r for r in answerable if r["visible"] is not None]
    add("answer", f"answer_visible@{k}", labelled, lambda r: float(r["visible"]), "answer_visible")
    located = [r for r in answerable if r["locator_hit"] is not None]
    add("answer", f"locator_hit@{k}", located, lambda r: float(r["locator_hit"]), "hit")
    add("answer", "declined_answerable", answerable, lambda r: float(r["declined"]), "declined")
    add("answer", "declined_unanswerable", unanswerable, lambda r: float(r["declined"]), "declined")
    # the reader: right when it quotes an answer (answerable) or says not found (unanswerable);
    # it cannot beat the share of answerable questions whose context holds an answer
    add("answer", "reader_accuracy", answerable, lambda r: float(r["reader_correct"]), "hit")
    add("answer", "budget_recall", answerable, lambda r: float(r["in_budget"]), "hit")
    add("answer", "reader_declined_unanswerable", unanswerable,
        lambda r: float(not (r["quote"] or {}).get("found")), "declined")
    offtopic = offtopic_declines(pipeline) if pipeline.config.gate.enabled else None
    if offtopic is not None:  # the bundled off-topic test half: beside the golden set, not in it
        summary["answer"]["declined_offtopic"] = interval("declined", offtopic["values"])

    generated = [r for r in records if r.get("generation")]
    if generated:
        summary["generation"] = {}
        for r in records:
            r["metrics"]["generation"] = {}
        for name in SCORES:
            group = [r for r in generated if r["generation"].get(name) is not None]
            add("generation", name, group, lambda r, name=name: float(r["generation"][name]), name)
        add("generation", "failed", generated, lambda r: float(r["generation"].get("failed", False)), "failed")

    losses = {c: [r["id"] for r in records if r["cause"] == c] for c in CAUSES}
    kinds = sorted({r["kind"] for r in records if r["kind"]})
    by_kind = {kind: {
        f"ranking hit@{k}": interval("hit", [r["metrics"]["ranking"].get(f"hit@{k}", 0.0)
                                             for r in answerable if r["kind"] == kind]),
        f"answer hit@{k}": interval("hit", [r["metrics"]["answer"].get(f"hit@{k}", 0.0)
                                            for r in answerable if r["kind"] == kind]),
        "ranking mrr@10": interval("mrr", [r["metrics"]["ranking"].get("mrr@10", 0.0) for r in answerable
                                           if r["kind"] == kind]),
        "declined": interval("declined", [float(r["declined"]) for r in records if r["kind"] == kind]),
    } for kind in kinds}
    return Run(
        format=RUN_FORMAT, format_version=RUN_FORMAT_VERSION, glassrag_version=__version__,
        code_version=code_version(), created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        index={"path": redact(index_path), "documents": len(index.documents), "chunks": len(index.chunks),
               "settings": index.config.to_dict()},
        config=pipeline.config.to_dict(),
        golden={"path": golden_path, "split": split, "questions": len(records),
                "answerable": len(answerable), "unanswerable": len(unanswerable)},
        k=k, seconds=round(elapsed, 3),
        ranking=RunSection(ranking, summary["ranking"]), answer=RunSection("answer", summary["answer"]),
        stages=stages, by_kind=by_kind, losses={c: ids for c, ids in losses.items() if ids},
        gate={**gate_summary(pipeline, records, k),
              **({"offtopic": {key: v for key, v in offtopic.items() if key != "values"}} if offtopic else {})},
        questions=tuple(records),
        generation=RunSection("generate", summary["generation"]) if generated else None,
        provenance=provenance({"lsa.seed": index.config.lsa.seed,
                               "generate.seed": pipeline.config.generate.seed}))


def write_run_file(run: Run, target: Path) -> None:
    """The run as JSON, written atomically (a temporary file renamed into place)."""
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(run.to_dict(), ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(target)
    except OSError as err:
        tmp.unlink(missing_ok=True)  # no partial file left; a previous run file stays as it was
        raise DiskError.of(str(target), err, "no run file was written") or err


def generation_record(q: Question | None, generation: Generation, titles: list[str],
                      analyze: Callable[[str], list[str]]) -> dict[str, Any]:
    """The generated answer of one question with its scores (evaluate/grade.py); without a
    golden question, the scores that need its labels are left out."""
    if generation.finish == REFUSED:  # no answer to score: counted in `failed` only
        return {"text": "", "labels": generation.labels, "ms": generation.ms, "failed": True}
    given = [Given.from_dict(g) for g in generation.given]
    return {"failed": False, "text": generation.text, "labels": generation.labels, "ms": generation.ms,
            "tokens": [generation.prompt_tokens, generation.completion_tokens],
            **grade(generation.text, given, titles, analyze, q.answerable if q else None,
                    q.must_contain if q else ())}


def gate_summary(pipeline: Pipeline, records: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """The gate's settings and how well each of its signals separates on these questions:
    AUROC of found answers (answer in the ranking's top k) against unanswerable questions,
    the populations the gate is calibrated on."""
    from glassrag.gate.calibrate import auroc, auroc_interval

    found = [r["gate_signals"] for r in records if r["answerable"] and r["gate_signals"]
             and r["metrics"]["ranking"].get(f"hit@{k}")]
    unanswerable = [r["gate_signals"] for r in records if not r["answerable"] and r["gate_signals"]]
    table = []
    if found and unanswerable:
        for name in sorted(set.intersection(*(set(s) for s in [*found, *unanswerable]))):
            pos, neg = [s[name] for s in found], [s[name] for s in unanswerable]
            low, high = auroc_interval(pos, neg)
            table.append({"signal": name, "auroc": auroc(pos, neg), "low": low, "high": high})
    table.sort(key=lambda r: -r["auroc"])
    return {"params": pipeline.gate.params(), "calibration": calibration_record(pipeline), "found": len(found),
            "unanswerable": len(unanswerable), "signals": table}


def offtopic_declines(pipeline: Pipeline) -> dict[str, Any]:
    """The bundled off-topic questions' test half through `pipeline`: 1 for each declined
    (a refused question counts as declined), the ids of those asked and of those answered
    (so two runs can be compared question by question: `compare.offtopic_question_metrics`)."""
    from glassrag.evaluate.offtopic import offtopic_questions

    values, answered, asked = [], [], []
    for q in offtopic_questions("test"):
        asked.append(q.id)
        try:
            declined = pipeline.run(q.question).declined
        except QueryError:
            declined = True
        values.append(float(declined))
        if not declined:
            answered.append(q.id)
    return {"questions": len(values), "declined": sum(values) / len(values) if values else 0.0,
            "asked": asked, "answered": answered, "values": values}


def _ranking_stage(records: list[dict[str, Any]]) -> str:
    """The last stage that ranks candidates before the gate: its ranking is the answer's."""
    for r in records:
        ranked = [name for name, st in r["stages"].items() if st["kind"] in RANKING_KINDS]
        if ranked:
            return ranked[-1]
    return "answer"


def _record(q: Question, judgement: Judgement, answer: Answer, k: int,
            doc_of: Callable[[str], str]) -> dict[str, Any]:
    relevant = judgement.relevant_chunks() - judgement.excluded
    shown = [] if answer.declined else ([answer.passage] if answer.passage else []) + list(answer.also_found)
    checked = visible(judgement, q, [p.shown for p in shown]) if q.answerable and shown else False
    is_visible = None if checked is None else bool(checked)
    stages: dict[str, Any] = {}
    answer_docs = set(judgement.unit_docs.values())
    for t in answer.trace:
        if not t.hits and t.kind not in ("retrieve", "observe", "select", "gate"):
            continue
        first = next((h for h in t.hits if h.chunk_id in relevant), None)
        top_docs = {doc_of(h.chunk_id) for h in t.hits[:k]}
        stages[t.name] = {
            "kind": t.kind,
            "family": t.params.get("family"),
            "first_relevant_rank": first.rank if first else None,
            "top_score": t.hits[0].score if t.hits else None,
            "top": [h.chunk_id for h in t.hits[:k]],
            "source_recall": (len(answer_docs & top_docs) / len(answer_docs)) if answer_docs else 0.0,
            "ms": t.ms,
        }
    kinds = [t for t in answer.trace if t.kind in RANKING_KINDS]
    final = kinds[-1] if kinds else None
    ranking = [[h.chunk_id, doc_of(h.chunk_id), round(h.score, 6)] for h in final.hits
               if h.chunk_id not in judgement.excluded] if final else []
    located = {(a.doc, a.locator) for a in q.answers if a.locator}
    locator_hit = (any(p.doc_id == doc and locator_matches(where, p.locator)
                       for p in shown for doc, where in located) if located else None)
    quote = answer.quote
    gate = next((t for t in answer.trace if t.kind == "gate"), None)
    packed = next((t for t in answer.trace if t.kind == "budget"), None)
    in_budget = bool(packed and any(h.chunk_id in relevant for h in packed.hits))
    reader_correct = bool(q.answerable and quote is not None and quote.found
                          and quote.chunk_id in relevant and quote_correct(judgement, q, quote.text))
    return {
        "id": q.id, "question": q.question, "kind": q.kind, "split": q.split,
        "in_budget": in_budget, "reader_correct": reader_correct, "locator_hit": locator_hit,
        "answerable": q.answerable, "declined": answer.declined, "reason": answer.reason,
        "visible": is_visible, "intact": judgement.intact,
        "answer_docs": sorted(answer_docs),
        "cause": loss_cause(judgement, q.answerable, answer, k, is_visible is not False),
        "stages": stages, "ranking": ranking,
        "quote": answer.quote.to_dict() if answer.quote else None,
        "gate_signals": dict(gate.params.get("signals") or {}) if gate else {},
    }

