"""The record of one evaluation, `Run` (docs/run-format.md): the metrics of the ranking and of the
answer side by side, every stage's, the losses and the per-question records; read back through
its whole shape (run_shape.py) before anything reads it."""

from __future__ import annotations

import copy
from dataclasses import dataclass, fields
from typing import Any, Mapping, Self

from glassrag.schema.corpus import _Plain
from glassrag.schema.records import QuestionRecord
from glassrag.schema.run_shape import run_problem

RUN_FORMAT = "glassrag-run"
RUN_FORMAT_VERSION = 2


@dataclass(frozen=True)
class RunSection(_Plain):
    """The metrics of one point of the pipeline and the stage they were read from:
    `ranking` is the last ranking stage before the gate, `answer` what was shown after it."""

    stage: str
    metrics: Mapping[str, Mapping[str, Any]]  # name -> {"value", "low", "high", "n"}


@dataclass(frozen=True)
class Run(_Plain):
    """One evaluation: every question once, metrics of the ranking and of the answer side by
    side, every stage's metrics, losses and the per-question records (docs/run-format.md).

    Each question is a `QuestionRecord` (schema/records.py), whose `metrics` has the same
    sections: {"ranking": {...}, "answer": {...}}.
    """

    format: str
    format_version: int
    glassrag_version: str
    code_version: str | None
    created: str
    index: Mapping[str, Any]
    config: Mapping[str, Any]
    golden: Mapping[str, Any]
    k: int
    seconds: float
    ranking: RunSection
    answer: RunSection
    stages: Mapping[str, Mapping[str, Any]]
    by_kind: Mapping[str, Any]
    losses: Mapping[str, list[str]]
    gate: Mapping[str, Any]
    questions: tuple[QuestionRecord, ...]
    generation: RunSection | None = None  # with eval --generate: the generated answers' scores
    provenance: Mapping[str, Any] | None = None  # packages, machine, seeds (glassrag/provenance.py)

    SECTIONS = ("ranking", "answer", "generation")

    def sections(self) -> list[str]:
        return [key for key in self.SECTIONS if getattr(self, key) is not None]

    def to_dict(self, deep: bool = True) -> dict[str, Any]:
        """A deep copy as plain data (changing it leaves the run as it was); without `deep`,
        the run's own mappings, for a caller that only reads them (writing the file). The
        question records are written as a run file holds them (`QuestionRecord.to_dict`)."""
        copied = copy.deepcopy if deep else (lambda value: value)
        out = {f.name: getattr(self, f.name) if f.name == "questions" else copied(getattr(self, f.name))
               for f in fields(self)}
        for key in self.SECTIONS:
            out[key] = getattr(self, key).to_dict() if getattr(self, key) is not None else None
        if out["generation"] is None:
            del out["generation"]
        out["questions"] = [q.to_dict() for q in self.questions]
        return out

    @classmethod
    def from_dict(cls, data: Any, name: str = "run") -> Self:
        """The run, or RunFileError naming the first field whose shape is wrong."""
        from glassrag.errors import RunFileError

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise RunFileError(f"{name}: {what}", "make the file again with glassrag eval --out FILE")

        need(isinstance(data, dict), f"a run file holds one JSON object, not {type(data).__name__}")
        need(data.get("format") == RUN_FORMAT, "not a glassrag run file (format is not \"glassrag-run\")")
        version = data.get("format_version")
        if version != RUN_FORMAT_VERSION:
            raise RunFileError(
                f"{name} is run format {version} (glassrag {data.get('glassrag_version')}); this glassrag "
                f"reads format {RUN_FORMAT_VERSION}, whose metrics are split into the ranking before "
                "the gate and the answer after it",
                "re-run glassrag eval with this version (the old file's numbers mix the two)")
        for key in ("index", "config", "golden", "stages", "by_kind", "losses", "gate"):
            need(isinstance(data.get(key), dict), f"'{key}' should be an object")
        offtopic = data["gate"].get("offtopic")  # the off-topic questions' ids (compare.py reads them)
        need(offtopic is None or (isinstance(offtopic, dict) and all(
            isinstance(offtopic.get(k, []), list) and all(isinstance(q, str) for q in offtopic.get(k, []))
            for k in ("asked", "answered"))),
            "'gate.offtopic' should be {\"asked\": [question ids], \"answered\": [question ids]}")
        need(isinstance(data.get("k"), int) and not isinstance(data.get("k"), bool) and data["k"] >= 1,
             "'k' should be a whole number ≥ 1")
        need(isinstance(data.get("seconds"), (int, float)), "'seconds' should be a number")
        sections = {}
        for key in cls.SECTIONS:
            sec = data.get(key)
            if key == "generation" and sec is None:
                continue  # only runs made with eval --generate have it
            need(isinstance(sec, dict) and isinstance(sec.get("stage"), str)
                 and isinstance(sec.get("metrics"), dict), f"'{key}' should be {{\"stage\", \"metrics\"}}")
            for metric, m in sec["metrics"].items():
                need(isinstance(m, dict) and "value" in m and isinstance(m.get("n"), int)
                     and (m["value"] is None or isinstance(m["value"], (int, float))),
                     f"{key} metric {metric!r} should be {{\"value\", \"low\", \"high\", \"n\"}}")
            sections[key] = RunSection(sec["stage"], sec["metrics"])
        questions = data.get("questions")
        need(isinstance(questions, list), "'questions' should be a list of question records")
        for i, q in enumerate(questions):
            need(isinstance(q, dict) and isinstance(q.get("id"), str) and isinstance(q.get("stages"), dict)
                 and isinstance(q.get("answerable"), bool) and isinstance(q.get("metrics", {}), dict)
                 and all(isinstance(v, dict) for v in q.get("metrics", {}).values()),
                 f"question record {i + 1} should have a string 'id', 'answerable', 'stages' and "
                 "'metrics' by section")
        for stage, metrics in data["stages"].items():
            need(isinstance(metrics, dict) and all(isinstance(m, dict) for m in metrics.values()),
                 f"stage {stage!r} should map metric names to {{\"value\", ...}}")
        wrong = run_problem(data)  # every nested field, so no reader meets a rank given as a string
        need(wrong is None, str(wrong))
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in data.items() if k in names}, **sections,
                      "code_version": data.get("code_version"), "glassrag_version": str(data.get("glassrag_version")),
                      "created": str(data.get("created", "")),
                      "questions": tuple(QuestionRecord.from_dict(q) for q in questions)})

    def flat_metrics(self) -> dict[str, Mapping[str, Any]]:
        """`"ranking hit@5"`, `"answer hit@5"`, ...: every section under one namespace."""
        return {f"{key} {m}": v for key in self.sections() for m, v in getattr(self, key).metrics.items()}

