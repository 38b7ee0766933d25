"""One evaluation run: every question through the pipeline once, metrics for every stage
from the trace, intervals, and the cause of every miss, in three steps: a `QuestionRecord` per
question (evaluate/records.py), the metrics of every stage, then the run's summary
(evaluate/summary.py). The run is a JSON file (docs/run-format.md) that `compare`, the web UI
and TREC export read.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from glassrag import __version__
from glassrag.errors import DiskError, QueryError
from glassrag.evaluate.fits import calibration_record
from glassrag.evaluate.golden import Question
from glassrag.evaluate.records import generation_record, question_record, ranking_stage
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.summary import by_kind, losses, section_measures, stage_metrics, summaries, with_metrics
from glassrag.pipeline import Pipeline
from glassrag.provenance import code_version, provenance
from glassrag.schema import RUN_FORMAT, RUN_FORMAT_VERSION, Answer, Run, RunSection
from glassrag.schema.records import QuestionRecord
from glassrag.store.pgschema import redact
from glassrag.store.safefile import replace_file


def evaluate(pipeline: Pipeline, questions: Sequence[Question], golden_path: str = "",
             split: str = "all", index_path: str = "",
             progress: Callable[[int, int], None] | None = None, judge: Judge | None = None) -> Run:
    """Run every question once and measure every stage (`judge`: one already made for this
    index, as a sweep shares among its configurations): question records (evaluate/records.py)
    → metrics per stage → the run's summary (evaluate/summary.py). `progress(done, total)`
    counts the bundled off-topic questions a gated pipeline is also run on (148 of them, after
    the golden set's: issue 49 saw an eval's bar stand full while they ran)."""
    from glassrag.evaluate.offtopic import offtopic_questions

    index = pipeline.index
    extra = offtopic_questions("test") if pipeline.config.gate.enabled else []
    total = len(questions) + len(extra)
    judge = judge or Judge(index.chunks)
    k = pipeline.config.answer.k
    started = time.perf_counter()
    records: list[QuestionRecord] = []
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
        generation = (generation_record(q, answer.generation, titles, index.analyzer)
                      if answer.generation is not None else None)
        records.append(question_record(q, judgement, answer, k, lambda cid: index.chunk(cid).doc_id, generation))
        for t in answer.trace:
            if t.hits:
                ranked.setdefault(t.name, {})[q.id] = judgement.ranked_units([h.chunk_id for h in t.hits])
        if progress:
            progress(n, total)
    elapsed = time.perf_counter() - started

    stages = stage_metrics(records, ranked, qrels, k)
    ranking = ranking_stage(records)
    offtopic = (offtopic_declines(pipeline, extra, progress and (lambda n: progress(len(questions) + n, total)))
                if pipeline.config.gate.enabled else None)
    measures = section_measures(records, stages, ranking, k, offtopic["values"] if offtopic else None)
    sections = ["ranking", "answer", *(["generation"] if any(r.generation for r in records) else [])]
    summary = summaries(measures, sections)
    records = with_metrics(records, measures, sections)
    answerable = sum(r.answerable for r in records)
    return Run(
        format=RUN_FORMAT, format_version=RUN_FORMAT_VERSION, glassrag_version=__version__,
        code_version=code_version(), created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        index={"path": redact(index_path), "documents": len(index.documents), "chunks": len(index.chunks),
               "settings": index.config.to_dict()},
        config=pipeline.config.to_dict(),
        golden={"path": golden_path, "split": split, "questions": len(records),
                "answerable": answerable, "unanswerable": len(records) - answerable},
        k=k, seconds=round(elapsed, 3),
        ranking=RunSection(ranking, summary["ranking"]), answer=RunSection("answer", summary["answer"]),
        stages=stages.summary, by_kind=by_kind(records, k), losses=losses(records),
        gate={**gate_summary(pipeline, records, k),
              **({"offtopic": {key: v for key, v in offtopic.items() if key != "values"}} if offtopic else {})},
        questions=tuple(records),
        generation=RunSection("generate", summary["generation"]) if "generation" in summary else None,
        provenance=provenance({"lsa.seed": index.config.lsa.seed,
                               "generate.seed": pipeline.config.generate.seed}))


def write_run_file(run: Run, target: Path) -> None:
    """The run as JSON, written atomically (a new temporary file renamed into place; one planted
    in a shared index folder is never written through: store/safefile.py)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # no partial file left on an error; a previous run file stays as it was
        replace_file(target, json.dumps(run.to_dict(), ensure_ascii=False, indent=1).encode("utf-8"))
    except OSError as err:
        raise DiskError.of(str(target), err, "no run file was written") or err


def gate_summary(pipeline: Pipeline, records: Sequence[QuestionRecord], k: int) -> dict[str, Any]:
    """The gate's settings and how well each of its signals separates on these questions:
    AUROC of found answers (answer in the ranking's top k) against unanswerable questions,
    the populations the gate is calibrated on."""
    from glassrag.stats import auroc, auroc_interval

    found = [r.gate_signals for r in records if r.answerable and r.gate_signals and r.metric("ranking", f"hit@{k}")]
    unanswerable = [r.gate_signals for r in records if not r.answerable and r.gate_signals]
    table = []
    if found and unanswerable:
        for name in sorted(set.intersection(*(set(s) for s in [*found, *unanswerable]))):
            pos, neg = [s[name] for s in found], [s[name] for s in unanswerable]
            low, high = auroc_interval(pos, neg)
            table.append({"signal": name, "auroc": auroc(pos, neg), "low": low, "high": high})
    table.sort(key=lambda r: -r["auroc"])
    return {"params": pipeline.gate.params(), "calibration": calibration_record(pipeline), "found": len(found),
            "unanswerable": len(unanswerable), "signals": table}


def offtopic_declines(pipeline: Pipeline, questions: Sequence[Question] | None = None,
                      progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The bundled off-topic questions' test half (or `questions`) through `pipeline`: 1 for
    each declined (a refused question counts as declined), the ids of those asked and of those
    answered (so two runs can be compared question by question:
    `compare.offtopic_question_metrics`); `progress(done)` after each."""
    from glassrag.evaluate.offtopic import offtopic_questions

    values, answered, asked = [], [], []
    for n, q in enumerate(offtopic_questions("test") if questions is None else questions, 1):
        asked.append(q.id)
        try:
            declined = pipeline.run(q.question).declined
        except QueryError:
            declined = True
        values.append(float(declined))
        if not declined:
            answered.append(q.id)
        if progress:
            progress(n)
    return {"questions": len(values), "declined": sum(values) / len(values) if values else 0.0,
            "asked": asked, "answered": answered, "values": values}
