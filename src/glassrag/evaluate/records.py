"""The first step of an evaluation: one `QuestionRecord` per question, made from the pipeline's
answer and the question's labels alone (what each stage returned, where the first relevant chunk
was, what the reader quoted, why an answer was lost). Its metrics are added later
(evaluate/summary.py), as a new record."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from glassrag.evaluate.diagnose import loss_cause
from glassrag.evaluate.golden import Question, locator_matches
from glassrag.evaluate.grade import grade
from glassrag.evaluate.relevance import Judgement, quote_correct, visible
from glassrag.generate import REFUSED
from glassrag.generate.prompt import Given
from glassrag.schema import Answer, Generation, Kind
from glassrag.schema.records import QuestionRecord, StageRecord

# stages recorded even when they passed nothing on
RECORDED_EMPTY = ("retrieve", "observe", "select", "gate")


def question_record(q: Question, judgement: Judgement, answer: Answer, k: int, doc_of: Callable[[str], str],
                    generation: Mapping[str, Any] | None = None) -> QuestionRecord:
    """What the evaluation keeps of one question, without its metrics."""
    relevant = judgement.relevant_chunks() - judgement.excluded
    shown = [] if answer.declined else ([answer.passage] if answer.passage else []) + list(answer.also_found)
    checked = visible(judgement, q, [p.shown for p in shown]) if q.answerable and shown else False
    is_visible = None if checked is None else bool(checked)
    answer_docs = set(judgement.unit_docs.values())
    stages: dict[str, StageRecord] = {}
    for t in answer.trace:
        if not t.hits and t.kind not in RECORDED_EMPTY:
            continue
        first = next((h for h in t.hits if h.chunk_id in relevant), None)
        top_docs = {doc_of(h.chunk_id) for h in t.hits[:k]}
        stages[t.name] = StageRecord(
            kind=t.kind, family=t.params.get("family"), first_relevant_rank=first.rank if first else None,
            top_score=t.hits[0].score if t.hits else None, top=tuple(h.chunk_id for h in t.hits[:k]),
            source_recall=(len(answer_docs & top_docs) / len(answer_docs)) if answer_docs else 0.0, ms=t.ms)
    kinds = [t for t in answer.trace if Kind(t.kind).ranks]
    final = kinds[-1] if kinds else None
    ranking = tuple((h.chunk_id, doc_of(h.chunk_id), round(h.score, 6)) for h in final.hits
                    if h.chunk_id not in judgement.excluded) if final else ()
    located = {(a.doc, a.locator) for a in q.answers if a.locator}
    locator_hit = (any(p.doc_id == doc and locator_matches(where, p.locator)
                       for p in shown for doc, where in located) if located else None)
    quote = answer.quote
    gate = next((t for t in answer.trace if t.kind == "gate"), None)
    packed = next((t for t in answer.trace if t.kind == "budget"), None)
    in_budget = bool(packed and any(h.chunk_id in relevant for h in packed.hits))
    reader_correct = bool(q.answerable and quote is not None and quote.found
                          and quote.chunk_id in relevant and quote_correct(judgement, q, quote.text))
    return QuestionRecord(
        id=q.id, question=q.question, answerable=q.answerable, kind=q.kind, split=q.split,
        in_budget=in_budget, reader_correct=reader_correct, locator_hit=locator_hit,
        declined=answer.declined, reason=answer.reason, visible=is_visible, intact=judgement.intact,
        answer_docs=tuple(sorted(answer_docs)),
        cause=loss_cause(judgement, q.answerable, answer, k, is_visible is not False),
        stages=stages, ranking=ranking, quote=quote.to_dict() if quote else None,
        gate_signals=dict(gate.params.get("signals") or {}) if gate else {}, generation=generation)


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


DENSE = ("vector_hit", "mean_top_similarity")  # a dense stage's own figures


def dense_figures(top_score: float | None) -> dict[str, float]:
    """A dense stage's figures on one question, from the score of its best passage: did it
    return anything (a cutoff can leave it empty), and that cosine (0 when it returned nothing)."""
    return {"vector_hit": float(top_score is not None), "mean_top_similarity": float(top_score or 0.0)}


def ranking_stage(records: list[QuestionRecord]) -> str:
    """The last stage that ranks candidates before the gate: its ranking is the answer's. (The
    records may be a run file's: a kind this version does not know is not a ranking.)"""
    for r in records:
        kinds = {name: Kind.of(st.kind) for name, st in r.stages.items()}
        ranked = [name for name, kind in kinds.items() if kind is not None and kind.ranks]
        if ranked:
            return ranked[-1]
    return "answer"
