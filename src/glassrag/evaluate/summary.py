"""The second and third steps of an evaluation: question records → metrics per stage → the
run's summary. Every figure is measured from a `MetricSpec` (schema/metric.py), which says
whether its interval is Wilson's (0/1 outcomes) or a bootstrap (graded values); nothing is
decided by a metric's name, and no record is changed in place (`with_metrics` makes new ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from glassrag.evaluate.diagnose import CAUSES
from glassrag.evaluate.grade import SCORES
from glassrag.evaluate.metrics import evaluate_run
from glassrag.evaluate.records import DENSE, dense_figures
from glassrag.schema import SPECS, MetricSpec
from glassrag.schema.records import QuestionRecord
from glassrag.stats import mean_interval, wilson_interval

Interval = dict[str, Any]  # {"value", "low", "high", "n"}
Ranked = Mapping[str, Mapping[str, list[str]]]  # stage -> question id -> ranked answer units
Qrels = Mapping[str, Mapping[str, int]]  # question id -> answer unit -> grade


def interval(spec: MetricSpec, values: Sequence[float]) -> Interval:
    """{value, low, high, n}: Wilson 95 % for 0/1 outcomes, a bootstrap 95 % (2,000 resamples,
    seed 0) for graded values."""
    n = len(values)
    if n == 0:
        return {"value": None, "low": None, "high": None, "n": 0}
    mean = float(np.mean(values))
    if spec.zero_one:
        low, high = wilson_interval(int(round(sum(values))), n)
    else:
        low, high = mean_interval(list(values), resamples=2000, seed=0)
    return {"value": mean, "low": float(low), "high": float(high), "n": n}


def stage_specs(k: int) -> list[MetricSpec]:
    """The ranking metrics of every stage that ranks chunks."""
    specs = [SPECS["hit"].at(1), SPECS["hit"].at(k), SPECS["recall"].at(k), SPECS["precision"].at(k),
             SPECS["mrr"].at(10), SPECS["ndcg"].at(10), SPECS["recall"].at(100), SPECS["hit"].at(10)]
    return list({s.name: s for s in specs}.values())  # once each, where it first comes (hit@10 when k = 10)


def answer_specs(k: int) -> list[MetricSpec]:
    """The answer stage's: it holds only k passages, so it is measured to depth k."""
    return [SPECS["hit"].at(1), SPECS["hit"].at(k), SPECS["recall"].at(k), SPECS["mrr"].at(k), SPECS["ndcg"].at(k)]


@dataclass(frozen=True)
class StageMetrics:
    """Every stage's metrics (`summary`: name -> interval) and their per-question values
    (`values`: name -> question id -> value), stages in the order questions met them."""

    summary: Mapping[str, Mapping[str, Interval]]
    values: Mapping[str, Mapping[str, Mapping[str, float]]]


def stage_metrics(records: Sequence[QuestionRecord], ranked: Ranked, qrels: Qrels, k: int) -> StageMetrics:
    """Each stage's ranking metrics over the questions with relevant labels, the share of the
    answer's documents in its top k, and a dense stage's own figures over every question that
    reached it (answerable or not)."""
    order = list(dict.fromkeys(s for r in records for s in r.stages))
    kinds = {name: st.kind for r in records for name, st in r.stages.items()}
    by_id = {r.id: r for r in records}
    source = SPECS["source_recall"].at(k)
    summary: dict[str, dict[str, Interval]] = {}
    values: dict[str, dict[str, dict[str, float]]] = {}
    for stage in order:
        specs = answer_specs(k) if kinds[stage] == "select" else stage_specs(k)
        per_question = evaluate_run(ranked.get(stage, {}), qrels, [s.name for s in specs])
        found = {s.name: interval(s, list(per_question[s.name].values())) for s in specs}
        reached = [by_id[q].stages[stage] for q in qrels if stage in by_id[q].stages]
        found[source.name] = interval(source, [st.source_recall for st in reached])
        per_question[source.name] = {r.id: r.stages[stage].source_recall for r in records
                                     if r.answerable and stage in r.stages}
        dense = [by_id[q].stages[stage] for q in by_id
                 if stage in by_id[q].stages and by_id[q].stages[stage].family == "dense"]
        if dense:
            figures = [dense_figures(st.top_score) for st in dense]
            found.update({name: interval(SPECS[name], [f[name] for f in figures]) for name in DENSE})
        summary[stage], values[stage] = found, per_question
    return StageMetrics(summary, values)


@dataclass(frozen=True)
class Measured:
    """One figure of a section of the run: its summary, and the value of each question it was
    measured on, by the question's position among the records."""

    section: str
    name: str
    summary: Interval
    values: Mapping[int, float]


def measured(section: str, spec: MetricSpec, records: Sequence[QuestionRecord],
             applies: Callable[[QuestionRecord], bool], value: Callable[[QuestionRecord], float]) -> Measured:
    """`spec` measured on the records for which `applies` holds, summarised over them."""
    values = {i: value(r) for i, r in enumerate(records) if applies(r)}
    return Measured(section, spec.name, interval(spec, list(values.values())), values)


def from_stage(section: str, stage: str, spec: MetricSpec, stages: StageMetrics,
               records: Sequence[QuestionRecord]) -> Measured | None:
    """A stage's metric as a section's: its summary over the stage's questions, and the value
    of every answerable question (0 where the stage did not rank it)."""
    if spec.name not in stages.summary.get(stage, {}):
        return None
    per_question = stages.values.get(stage, {}).get(spec.name, {})
    return Measured(section, spec.name, stages.summary[stage][spec.name],
                    {i: per_question.get(r.id, 0.0) for i, r in enumerate(records) if r.answerable})


def section_measures(records: Sequence[QuestionRecord], stages: StageMetrics, ranking: str, k: int,
                     offtopic: Sequence[float] | None) -> list[Measured]:
    """Every figure of the ranking (`ranking`, the last stage before the gate) and of the answer
    after the gate, and of generated answers when there are any, in the run file's order."""
    source = SPECS["source_recall"].at(k)
    of_stages = [("ranking", ranking, spec) for spec in [*stage_specs(k), source]]
    of_stages += [("answer", "answer", spec) for spec in [*answer_specs(k), source]]
    out = [m for section, stage, spec in of_stages if (m := from_stage(section, stage, spec, stages, records))]

    def answerable(r: QuestionRecord) -> bool:
        return r.answerable

    def unanswerable(r: QuestionRecord) -> bool:
        return not r.answerable

    out += [
        measured("ranking", SPECS["answer_intact"], records, answerable, lambda r: float(r.intact)),
        measured("ranking", SPECS["rank1_buried"].at(k), records, lambda r: r.answerable and fused(r),
                 lambda r: float(buried(r, k))),
        measured("answer", SPECS["answer_visible"].at(k), records, lambda r: r.answerable and r.visible is not None,
                 lambda r: float(r.visible)),
        measured("answer", SPECS["locator_hit"].at(k), records,
                 lambda r: r.answerable and r.locator_hit is not None, lambda r: float(r.locator_hit)),
        measured("answer", SPECS["declined_answerable"], records, answerable, lambda r: float(r.declined)),
        measured("answer", SPECS["declined_unanswerable"], records, unanswerable, lambda r: float(r.declined)),
        # the reader: right when it quotes an answer (answerable) or says not found (unanswerable);
        # it cannot beat the share of answerable questions whose context holds an answer
        measured("answer", SPECS["reader_accuracy"], records, answerable, lambda r: float(r.reader_correct)),
        measured("answer", SPECS["budget_recall"], records, answerable, lambda r: float(r.in_budget)),
        measured("answer", SPECS["reader_declined_unanswerable"], records, unanswerable,
                 lambda r: float(not (r.quote or {}).get("found"))),
    ]
    if offtopic is not None:  # the bundled off-topic test half: beside the golden set, not in it
        spec = SPECS["declined_offtopic"]
        out.append(Measured("answer", spec.name, interval(spec, offtopic), {}))
    if any(r.generation for r in records):
        out += [measured("generation", SPECS[name], records,
                         lambda r, name=name: bool(r.generation) and r.generation.get(name) is not None,
                         lambda r, name=name: float(r.generation[name])) for name in SCORES]
        out.append(measured("generation", SPECS["failed"], records, lambda r: bool(r.generation),
                            lambda r: float(r.generation.get("failed", False))))
    return out


def fused(record: QuestionRecord) -> bool:
    """The question went through a fusion of two or more retrievers."""
    kinds = [st.kind for st in record.stages.values()]
    return "fuse" in kinds and kinds.count("retrieve") >= 2


def buried(record: QuestionRecord, k: int) -> bool:
    """Fusion buried a first place: some fused retriever ranked an answer unit first, and the
    fused list has none in its top k (issue 47: the answer BM25 alone returned first, lost by
    adding a retriever)."""
    first = any(st.kind == "retrieve" and st.first_relevant_rank == 1 for st in record.stages.values())
    fuse = next((st for st in record.stages.values() if st.kind == "fuse"), None)
    return bool(first and fuse is not None
                and (fuse.first_relevant_rank is None or fuse.first_relevant_rank > k))


def summaries(measures: Sequence[Measured], sections: Sequence[str]) -> dict[str, dict[str, Interval]]:
    """section -> metric name -> interval."""
    out: dict[str, dict[str, Interval]] = {section: {} for section in sections}
    for m in measures:
        out[m.section][m.name] = m.summary
    return out


def with_metrics(records: Sequence[QuestionRecord], measures: Sequence[Measured],
                 sections: Sequence[str]) -> list[QuestionRecord]:
    """New records, each with its value of every figure measured on it, by section."""
    return [r.with_metrics({section: {m.name: m.values[i] for m in measures
                                      if m.section == section and i in m.values} for section in sections})
            for i, r in enumerate(records)]


def by_kind(records: Sequence[QuestionRecord], k: int) -> dict[str, dict[str, Interval]]:
    """The headline figures per kind of question (identifier, paraphrase, unanswerable, ...)."""
    hit, mrr, declined = SPECS["hit"].at(k), SPECS["mrr"].at(10), SPECS["declined"]
    answerable = [r for r in records if r.answerable]
    return {kind: {
        f"ranking {hit.name}": interval(hit, [r.metric("ranking", hit.name) for r in answerable if r.kind == kind]),
        f"answer {hit.name}": interval(hit, [r.metric("answer", hit.name) for r in answerable if r.kind == kind]),
        f"ranking {mrr.name}": interval(mrr, [r.metric("ranking", mrr.name) for r in answerable if r.kind == kind]),
        declined.name: interval(declined, [float(r.declined) for r in records if r.kind == kind]),
    } for kind in sorted({r.kind for r in records if r.kind})}


def losses(records: Sequence[QuestionRecord]) -> dict[str, list[str]]:
    """cause -> the ids of the questions lost to it, the causes that lost none left out."""
    out = {c: [r.id for r in records if r.cause == c] for c in CAUSES}
    return {c: ids for c, ids in out.items() if ids}
