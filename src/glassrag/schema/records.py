"""What an evaluation keeps of each question (docs/run-format.md, `questions[]`): `QuestionRecord`,
with a `StageRecord` for every stage of its trace. They are made once from the question's answer
and its labels (evaluate/records.py); the metrics are added by `with_metrics`, which returns a new
record. `to_dict` writes the fields in the order run files have always had."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Self

from glassrag.schema.corpus import _Plain


@dataclass(frozen=True)
class StageRecord(_Plain):
    """One stage on one question: its kind and family, the rank of the first relevant chunk it
    passed on, its best score, its top k chunk ids, the share of the answer's documents among
    those k (`source_recall`) and its time."""

    kind: str
    family: str | None = None
    first_relevant_rank: int | None = None
    top_score: float | None = None
    top: tuple[str, ...] = ()
    source_recall: float = 0.0
    ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "family": self.family, "first_relevant_rank": self.first_relevant_rank,
                "top_score": self.top_score, "top": list(self.top), "source_recall": self.source_recall,
                "ms": self.ms}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(data["kind"], data.get("family"), data.get("first_relevant_rank"), data.get("top_score"),
                   tuple(data.get("top", ())), data.get("source_recall", 0.0), data.get("ms", 0.0))


@dataclass(frozen=True)
class QuestionRecord(_Plain):
    """One question of a run: what it was, what the pipeline did with it (declined and why, each
    stage, the final ranking as [chunk, document, score], the reader's quote, the gate's
    signals, a generated answer), why an answer was lost (`cause`), and its metrics by section
    ({"ranking": {"hit@5": 1.0, ...}, "answer": {...}}), under the names the run's summary uses."""

    id: str
    question: str
    answerable: bool
    kind: str | None = None
    split: str | None = None
    in_budget: bool = False
    reader_correct: bool = False
    locator_hit: bool | None = None
    declined: bool = False
    reason: str | None = None
    visible: bool | None = None
    intact: bool | None = None
    answer_docs: tuple[str, ...] = ()
    cause: str | None = None
    stages: Mapping[str, StageRecord] = field(default_factory=dict)
    ranking: tuple[tuple[str, str, float], ...] = ()
    quote: Mapping[str, Any] | None = None
    gate_signals: Mapping[str, float | None] = field(default_factory=dict)
    generation: Mapping[str, Any] | None = None
    metrics: Mapping[str, Mapping[str, float]] = field(default_factory=dict)

    def with_metrics(self, metrics: Mapping[str, Mapping[str, float]]) -> QuestionRecord:
        return replace(self, metrics={section: dict(values) for section, values in metrics.items()})

    def metric(self, section: str, name: str, default: float = 0.0) -> float:
        return self.metrics.get(section, {}).get(name, default)

    def to_dict(self) -> dict[str, Any]:
        out = {"id": self.id, "question": self.question, "kind": self.kind, "split": self.split,
               "in_budget": self.in_budget, "reader_correct": self.reader_correct, "locator_hit": self.locator_hit,
               "answerable": self.answerable, "declined": self.declined, "reason": self.reason,
               "visible": self.visible, "intact": self.intact, "answer_docs": list(self.answer_docs),
               "cause": self.cause, "stages": {name: s.to_dict() for name, s in self.stages.items()},
               "ranking": [list(row) for row in self.ranking],
               "quote": dict(self.quote) if self.quote is not None else None,
               "gate_signals": dict(self.gate_signals)}
        if self.generation is not None:
            out["generation"] = copy.deepcopy(dict(self.generation))  # its lists stay the record's
        out["metrics"] = {section: dict(values) for section, values in self.metrics.items()}
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """A record as a run file holds it (checked by run_shape.QUESTION); fields written by
        older versions that a record no longer has are not read."""
        return cls(
            data["id"], data.get("question", ""), data["answerable"], data.get("kind"), data.get("split"),
            bool(data.get("in_budget", False)), bool(data.get("reader_correct", False)), data.get("locator_hit"),
            bool(data.get("declined", False)), data.get("reason"), data.get("visible"), data.get("intact"),
            tuple(data.get("answer_docs", ())), data.get("cause"),
            {name: StageRecord.from_dict(s) for name, s in data.get("stages", {}).items()},
            tuple((row[0], row[1], row[2]) for row in data.get("ranking", ())), data.get("quote"),
            dict(data.get("gate_signals") or {}), data.get("generation"),
            {section: dict(values) for section, values in data.get("metrics", {}).items()})

    def flat_metrics(self) -> dict[str, float]:
        """The metrics under the names of `Run.flat_metrics`: "answer hit@5"."""
        return {f"{section} {m}": v for section, values in self.metrics.items() for m, v in values.items()}
