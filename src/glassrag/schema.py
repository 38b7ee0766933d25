"""The plain data that flows between stages: frozen dataclasses with to_dict/from_dict.

Document ─▶ Section (with its locator) ─▶ Chunk ─▶ Hit ─▶ StageTrace ─▶ Answer.
Ids are content hashes, so the same text always gets the same id and an unchanged
file can be recognised and its chunks reused.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Self


def content_hash(*parts: str, length: int = 16) -> str:
    """Hex SHA-256 of the parts joined by a unit separator, cut to `length` characters."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:length]


class _Plain:
    """to_dict/from_dict for frozen dataclasses whose fields are JSON-safe or nested _Plain."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Section(_Plain):
    """A stretch of a document's text with one locator: `§ 2.3 Returns`, `page 4`, `slide 2`.

    `start`/`end` are character offsets into `Document.text`; `heading_path` lists the
    headings above it, outermost first.
    """

    locator: str
    start: int
    end: int
    heading_path: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:  # what asdict gives, without its recursion (ingest writes one a section)
        return {"locator": self.locator, "start": self.start, "end": self.end, "heading_path": self.heading_path}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(data["locator"], data["start"], data["end"], tuple(data.get("heading_path", ())))


@dataclass(frozen=True)
class Document(_Plain):
    """One source file after extraction: its whole text and the sections that cover it."""

    id: str
    title: str
    source: str
    format: str
    text: str
    sections: tuple[Section, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            id=data["id"],
            title=data["title"],
            source=data["source"],
            format=data["format"],
            text=data["text"],
            sections=tuple(Section.from_dict(s) for s in data["sections"]),
            metadata=dict(data.get("metadata", {})),
            content_hash=data.get("content_hash", ""),
        )

    def section_text(self, section: Section) -> str:
        return self.text[section.start : section.end]


@dataclass(frozen=True)
class Chunk(_Plain):
    """A passage that is indexed and can be shown: a verbatim span `text == doc.text[start:end]`."""

    id: str
    doc_id: str
    locator: str
    text: str
    start: int
    end: int
    position: int
    heading_path: tuple[str, ...] = ()

    @classmethod
    def make(
        cls,
        doc_id: str,
        locator: str,
        text: str,
        start: int,
        end: int,
        position: int,
        heading_path: tuple[str, ...] = (),
    ) -> "Chunk":
        cid = content_hash(doc_id, str(start), str(end), text)
        return cls(cid, doc_id, locator, text, start, end, position, heading_path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:  # by name, not through fields(): a table read parses one a row
        return cls(data["id"], data["doc_id"], data["locator"], data["text"], data["start"], data["end"],
                   data["position"], tuple(data.get("heading_path", ())))


@dataclass(frozen=True)
class Hit(_Plain):
    """A chunk as one stage ranked it. `detail` carries what explains the score
    (for fusion: each input's rank and score)."""

    chunk_id: str
    score: float
    rank: int
    stage: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["detail"] = dict(self.detail)
        return data


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


# the kinds of stage that rank candidates (the last of them, before the gate, is the ranking
# a run's `ranking` section and the gate's signals read)
RANKING_KINDS = ("retrieve", "fuse", "versions", "rerank", "mmr", "cap")
# the kinds whose scores are scores of relevance (not a reordering of someone else's)
SCORING_KINDS = ("retrieve", "fuse", "rerank")

RUN_FORMAT = "glassrag-run"
RUN_FORMAT_VERSION = 2
# every metric is better higher but these
LOWER_IS_BETTER = frozenset({"declined_answerable",
                             # a generated answer's (evaluate/grade.py)
                             "foreign_citations", "leaked_tags", "refused_answerable", "hedged",
                             "failed"})  # the backend refused the prompt: no answer


def better(metric: str) -> str:
    """'higher' or 'lower': which way a metric improves (named without its section)."""
    return "lower" if metric.split(" ")[-1] in LOWER_IS_BETTER else "higher"


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

    A question record's `metrics` has the same two sections: {"ranking": {...}, "answer": {...}}.
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
    questions: tuple[Mapping[str, Any], ...]
    generation: RunSection | None = None  # with eval --generate: the generated answers' scores
    provenance: Mapping[str, Any] | None = None  # packages, machine, seeds (glassrag/provenance.py)

    SECTIONS = ("ranking", "answer", "generation")

    def sections(self) -> list[str]:
        return [key for key in self.SECTIONS if getattr(self, key) is not None]

    def to_dict(self, deep: bool = True) -> dict[str, Any]:
        """A deep copy as plain data (changing it leaves the run as it was); without `deep`,
        the run's own records, for a caller that only reads them (writing the file)."""
        out = {f.name: copy.deepcopy(getattr(self, f.name)) if deep else getattr(self, f.name)
               for f in fields(self)}
        for key in self.SECTIONS:
            out[key] = getattr(self, key).to_dict() if getattr(self, key) is not None else None
        if out["generation"] is None:
            del out["generation"]
        out["questions"] = list(out["questions"])
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
        from glassrag.evaluate.run_shape import run_problem

        wrong = run_problem(data)  # every nested field, so no reader meets a rank given as a string
        need(wrong is None, str(wrong))
        names = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in data.items() if k in names}, **sections,
                      "code_version": data.get("code_version"), "glassrag_version": str(data.get("glassrag_version")),
                      "created": str(data.get("created", "")), "questions": tuple(questions)})

    def flat_metrics(self) -> dict[str, Mapping[str, Any]]:
        """`"ranking hit@5"`, `"answer hit@5"`, ...: every section under one namespace."""
        return {f"{key} {m}": v for key in self.sections() for m, v in getattr(self, key).metrics.items()}


def flat_question_metrics(record: Mapping[str, Any]) -> dict[str, float]:
    """A question record's metrics under the same names as `Run.flat_metrics`."""
    return {f"{key} {m}": v for key, values in record.get("metrics", {}).items() for m, v in values.items()}
