"""The whole shape of a run file (docs/run-format.md), nested fields included, checked once
before anything reads it: `Run.from_dict` calls `run_problem`, so `compare`, the web pages
and TREC export never meet a stage that is not an object or a rank given as a string.

A shape is a small value (`Obj`, `Map`, `List`, `Opt`, a scalar kind); `problem(value, where)`
names the first field that does not fit, as a path such as `questions[3].stages.bm25.top`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


class Shape:
    """A JSON shape: `problem` is None when the value fits, else what is wrong and where."""

    def problem(self, value: Any, where: str) -> str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class Kind(Shape):
    """A scalar: str, bool, a whole number or any number (bools are not numbers here)."""

    name: str
    types: tuple[type, ...]

    def problem(self, value: Any, where: str) -> str | None:
        if isinstance(value, bool) and bool not in self.types:
            return _wrong(where, self.name, value)
        return None if isinstance(value, self.types) else _wrong(where, self.name, value)


@dataclass(frozen=True)
class Anything(Shape):
    def problem(self, value: Any, where: str) -> str | None:
        return None


@dataclass(frozen=True)
class Opt(Shape):
    """The shape or null."""

    inner: Shape

    def problem(self, value: Any, where: str) -> str | None:
        return None if value is None else self.inner.problem(value, where)


@dataclass(frozen=True)
class List(Shape):
    item: Shape

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, list):
            return _wrong(where, "a list", value)
        return next((p for i, v in enumerate(value) if (p := self.item.problem(v, f"{where}[{i}]"))), None)


@dataclass(frozen=True)
class Row(Shape):
    """A list of a fixed length with a shape for each place, named as a reader sees it."""

    name: str
    items: tuple[Shape, ...]

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, list):
            return _wrong(where, self.name, value)
        if len(value) != len(self.items):
            return f"{where} should be {self.name}, not a list of {len(value)}"
        return next((p for i, (shape, v) in enumerate(zip(self.items, value))
                     if (p := shape.problem(v, f"{where}[{i}]"))), None)


@dataclass(frozen=True)
class Map(Shape):
    """An object whose every value has one shape (keys are names)."""

    value: Shape

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, dict):
            return _wrong(where, "an object", value)
        return next((p for k, v in value.items() if (p := self.value.problem(v, f"{where}.{k}"))), None)


@dataclass(frozen=True)
class Obj(Shape):
    """An object of known fields (`required` must be there; others may be absent); fields
    not listed are allowed and not read."""

    fields: dict[str, Shape]
    required: frozenset[str] = field(default_factory=frozenset)

    def problem(self, value: Any, where: str) -> str | None:
        if not isinstance(value, dict):
            return _wrong(where, "an object", value)
        for key in sorted(self.required):
            if key not in value:
                return f"{where}.{key} is missing"
        return next((p for k, shape in self.fields.items()
                     if k in value and (p := shape.problem(value[k], f"{where}.{k}"))), None)


def _wrong(where: str, expected: str, value: Any) -> str:
    got = "null" if value is None else {bool: "true/false", int: "a whole number", float: "a number",
                                        str: "a string", list: "a list", dict: "an object"}.get(
        type(value), type(value).__name__)
    return f"{where} should be {expected}, not {got}"


STR = Kind("a string", (str,))
INT = Kind("a whole number", (int,))
NUM = Kind("a number", (int, float))
BOOL = Kind("true or false", (bool,))
ANY = Anything()

METRIC = Obj({"value": Opt(NUM), "low": Opt(NUM), "high": Opt(NUM), "n": INT}, frozenset({"value", "n"}))
SECTION = Obj({"stage": STR, "metrics": Map(METRIC)}, frozenset({"stage", "metrics"}))
STAGE_RECORD = Obj({"kind": STR, "family": Opt(STR), "first_relevant_rank": Opt(INT), "top_score": Opt(NUM),
                    "top": List(STR), "source_recall": NUM, "ms": NUM}, frozenset({"kind"}))
GENERATION_RECORD = Obj({"failed": BOOL, "text": STR, "labels": ANY, "ms": NUM, "tokens": List(Opt(INT)),
                         "refusal": STR, "found": Map(List(STR)),
                         **{name: Opt(NUM) for name in ("foreign_citations", "leaked_tags", "cited", "hedged",
                                                        "wording_share", "refused_unanswerable",
                                                        "refused_answerable", "contains_answer")}})
QUESTION = Obj({"id": STR, "question": STR, "kind": Opt(STR), "split": Opt(STR), "answerable": BOOL,
                "declined": Opt(BOOL), "reason": Opt(STR), "visible": Opt(BOOL), "intact": Opt(BOOL),
                "in_budget": Opt(BOOL), "reader_correct": Opt(BOOL), "locator_hit": Opt(BOOL),
                "answer_docs": List(STR), "cause": Opt(STR), "stages": Map(STAGE_RECORD),
                "ranking": List(Row("[chunk id, document id, score]", (STR, STR, NUM))),
                "metrics": Map(Map(NUM)), "quote": Opt(Map(ANY)), "gate_signals": Map(Opt(NUM)),
                "generation": Opt(GENERATION_RECORD)},
               frozenset({"id", "answerable", "stages"}))
RUN = Obj({
    "glassrag_version": Opt(STR), "code_version": Opt(STR), "created": STR,
    "index": Obj({"path": STR, "documents": INT, "chunks": INT, "settings": Map(Map(ANY))}),
    "config": Map(Map(ANY)),  # section -> setting -> value
    "golden": Obj({"path": STR, "split": STR, "questions": INT, "answerable": INT, "unanswerable": INT}),
    "seconds": NUM,
    "ranking": SECTION, "answer": SECTION, "generation": Opt(SECTION),
    "stages": Map(Map(METRIC)), "by_kind": Map(Map(METRIC)), "losses": Map(List(STR)),
    "gate": Obj({"params": Map(ANY), "found": INT, "unanswerable": INT,
                 "signals": List(Obj({"signal": STR, "auroc": Opt(NUM), "low": Opt(NUM), "high": Opt(NUM)},
                                     frozenset({"signal"})))}),
    "questions": List(QUESTION), "provenance": Opt(Map(ANY)),
}, frozenset({"index", "config", "golden", "seconds", "ranking", "answer", "stages", "by_kind", "losses",
              "gate", "questions"}))


def run_problem(data: dict[str, Any]) -> str | None:
    """The first field of a run (already known to be an object of this format) whose shape
    is wrong, as `path should be X, not Y`, or text in it that is not Unicode; None when
    every field fits."""
    return RUN.problem(data, "run") or text_problem(data)


def text_problem(data: Any) -> str | None:
    """A lone surrogate anywhere in `data` (a key or a value): JSON's `\\ud800` escape with
    no pair decodes to one, which no page, terminal or file can encode (issue 51.12)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        return (f"the run holds text that is not Unicode (a lone surrogate, "
                f"\\u{ord(e.object[e.start]):04x}, at character {e.start} of its text)")
    return None
