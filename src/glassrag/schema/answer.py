"""What a question's way through the pipeline leaves: each stage's ranked Hits and its StageTrace,
and the Answer (its Passages, the reader's Quote, a model's Generation), frozen dataclasses with
to_dict/from_dict. The kinds of stage, and which of them rank, are in kind.py."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping, Self

from glassrag.schema.corpus import _Plain


@dataclass(frozen=True)
class Hit(_Plain):
    """A chunk as one stage ranked it. `detail` carries what explains the score
    (for fusion: each input's rank and score)."""

    chunk_id: str
    score: float
    rank: int
    stage: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:  # what asdict gave, without its deep copy (a trace holds hundreds)
        return {"chunk_id": self.chunk_id, "score": self.score, "rank": self.rank, "stage": self.stage,
                "detail": dict(self.detail)}


@dataclass(frozen=True)
class StageTrace(_Plain):
    """What one stage did: its parameters, the stages it read from (`inputs`), the hits
    it passed on with scores and ranks, how many candidates it received, and its time.

    The hits a stage received are the `hits` of the stages named in `inputs`; they are
    not stored twice.
    """

    name: str
    kind: str
    params: Mapping[str, Any]
    inputs: tuple[str, ...]
    hits: tuple[Hit, ...]
    n_in: int
    ms: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "params": dict(self.params),
            "inputs": list(self.inputs),
            "hits": [h.to_dict() for h in self.hits],
            "n_in": self.n_in,
            "ms": self.ms,
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            name=data["name"],
            kind=data["kind"],
            params=dict(data["params"]),
            inputs=tuple(data["inputs"]),
            hits=tuple(Hit.from_dict(h) for h in data["hits"]),
            n_in=data["n_in"],
            ms=data["ms"],
            notes=tuple(data.get("notes", ())),
        )


@dataclass(frozen=True)
class Passage(_Plain):
    """A chunk ready to show: its text verbatim with the citation that finds it again.

    `excerpt` is the window actually shown (`text[excerpt_start:excerpt_start +
    len(excerpt)]`); `highlights` are [start, end) offsets of answer words in the excerpt.
    """

    chunk_id: str
    doc_id: str
    title: str
    locator: str
    text: str
    score: float
    rank: int
    excerpt: str = ""
    excerpt_start: int = 0
    highlights: tuple[tuple[int, int], ...] = ()

    @property
    def citation(self) -> str:
        return f"{self.title}, {self.locator}" if self.locator else self.title

    @property
    def shown(self) -> str:
        return self.excerpt or self.text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        values = dict(data)
        values["highlights"] = tuple(tuple(h) for h in values.get("highlights", ()))
        return super().from_dict(values)


@dataclass(frozen=True)
class Quote(_Plain):
    """What the extractive reader answers: one sentence of the context, or not found."""

    text: str
    chunk_id: str
    coverage: float
    found: bool
    why: str
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Generation(_Plain):
    """What a model wrote from the passages it was given (off unless [generate] enabled).

    `given` lists the passages as the model saw them (chunk id, label, locators, text);
    `messages` is the prompt exactly as sent.
    """

    text: str
    backend: str
    model: str
    labels: str
    given: tuple[Mapping[str, Any], ...]
    messages: tuple[Mapping[str, str], ...]
    prompt_tokens: int | None
    completion_tokens: int | None
    ms: float
    finish: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["given"], out["messages"] = [dict(g) for g in self.given], [dict(m) for m in self.messages]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        names = {f.name for f in fields(cls)}
        got = {k: v for k, v in data.items() if k in names}
        got["given"], got["messages"] = tuple(got.get("given", ())), tuple(got.get("messages", ()))
        return cls(**got)


@dataclass(frozen=True)
class Answer(_Plain):
    """What a question gets back: the top passage, what else was found, and the route."""

    question: str
    passage: Passage | None
    also_found: tuple[Passage, ...]
    declined: bool
    reason: str
    trace: tuple[StageTrace, ...]
    quote: Quote | None = None
    generation: Generation | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "passage": self.passage.to_dict() if self.passage else None,
            "citation": self.passage.citation if self.passage else None,
            "also_found": [p.to_dict() for p in self.also_found],
            "declined": self.declined,
            "reason": self.reason,
            "quote": self.quote.to_dict() if self.quote else None,
            "generation": self.generation.to_dict() if self.generation else None,
            "trace": [t.to_dict() for t in self.trace],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            question=data["question"],
            passage=Passage.from_dict(data["passage"]) if data.get("passage") else None,
            also_found=tuple(Passage.from_dict(p) for p in data["also_found"]),
            declined=data["declined"],
            reason=data["reason"],
            trace=tuple(StageTrace.from_dict(t) for t in data["trace"]),
            quote=Quote.from_dict(data["quote"]) if data.get("quote") else None,
            generation=Generation.from_dict(data["generation"]) if data.get("generation") else None,
        )

    def stage(self, name: str) -> StageTrace:
        for t in self.trace:
            if t.name == name:
                return t
        raise KeyError(f"no stage {name!r} in trace; stages: {[t.name for t in self.trace]}")

