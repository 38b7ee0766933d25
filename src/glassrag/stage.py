"""One stage contract (issue 29): what every stage of a question's way is, what it returns, and
the table entry that registers one.

A stage is built from its settings by its table entry, and then

    name: str          the trace's name for it ("bm25", "fuse", "rerank", "gate", "answer", "read")
    kind: Kind         what it does (Kind.RETRIEVE, FUSE, VERSIONS, FILTER, WINDOW, RERANK, MMR, CAP,
                       GATE, BUDGET, SELECT, READ, GENERATE: glassrag/schema/kind.py), declared by
                       its class (`kind = Kind.RERANK`); the kind says whether its list is a
                       ranking (`Kind.ranks`) and its scores its own (`Kind.scores`)
    params() -> dict   every setting it reads, JSON-safe: the trace records it and the stage
                       cache keys on it (or on `cache_params()`, when the trace records fewer)
    run(query, inputs) -> StageOutput

`inputs` maps the name of each stage it reads to that stage's output, in order: nothing for a
retriever (it starts from the analysed question), every fused retriever for fusion, the stage
before it for the rest; then the stages whose `decision` it consults (the answer and the reader
consult the gate's, the generator the answer's). The loop (glassrag/pipeline/loop.py) chooses
the inputs, runs the stage and writes its trace; a stage never writes its own.

One stage reads more than outputs: the gate's signals read the trace so far (every retriever's
top score, the last ranking). It says so with `reads_trace = True` and splits its run in two,
`measure(query, trace)` (the signals, what the stage cache keeps under `measure_id()`) and
`decided(inputs, measured) -> StageOutput`; `run(query, inputs, trace)` is the two in turn.

Every family of stages is a table of `Entry`s looked up by name (the retrievers an index has,
FUSERS, RERANKERS, and the one-entry tables of versions, the matter filter, window scoring, MMR,
the cap, the gate, the budget, the answer, the reader and the generator; glassrag/pipeline/stages.py
`tables(index)` lists them all; the retrievers' is a function of the index: glassrag/retrieve/
__init__.py `table`). An entry says how to make the stage from the settings, where it can run and what
its score is, so the web asks the entry instead of deciding by a stage's name; a retriever that
needs a part of its own in the index says how to build it, so the indexer asks the entry instead
of testing the retrievers' names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol, Sequence

from glassrag.query import Query
from glassrag.schema import Generation, Hit, Passage, Quote
from glassrag.schema.kind import Kind

if TYPE_CHECKING:  # a score source's type only: importing the contract loads no numpy
    import numpy as np
    from numpy.typing import NDArray

NOT_A_PROBABILITY = "Not a probability that the answer is right."


@dataclass(frozen=True)
class ScoreSource:
    """A retriever's score for any chunk, and the range of its scores: over the whole
    corpus when `whole_corpus`, else over the candidates it is asked about (an approximate
    index that never scores every chunk)."""

    score: Callable[[Sequence[str]], Sequence[float] | NDArray[np.float64]]  # chunk ids -> scores
    low: float = 0.0
    high: float = 0.0
    whole_corpus: bool = True


@dataclass(frozen=True)
class Decision:
    """Whether a question is declined, and why (the gate's, or the answer's: the gate's and
    "no passage matched any word of the question")."""

    declined: bool
    why: str

    def outcome(self) -> tuple[bool, str]:
        """What a stage that consults it may read: whether the question is declined, and why only
        when it is (a passed question's reason changes nothing after it; the stage cache keys
        what follows on this)."""
        return self.declined, self.why if self.declined else ""


@dataclass(frozen=True)
class StageOutput:
    """What a stage passes on: its ranked hits, its notes for the trace, and what a later stage
    may read beyond the list, each declared by the stage that makes it:

    scores      the stage's score of a chunk outside its list (a retriever that scores every
                chunk declares it; weighted fusion reads it, and reads the list's own scores
                when it is None)
    decision    the gate's decision, or the answer's (what the reader and the generator consult)
    passages    the answer's passages, in rank order
    quote       the reader's quote
    generation  the generator's answer
    traced      what the trace's params record of this question beside the stage's settings
                (the gate's signals, the passages given to a model)
    setup_ms    time the stage spent on what later questions do not pay again (a model loaded
                for the first question): left out of the time its trace shows
    """

    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = ()
    scores: ScoreSource | None = None
    decision: Decision | None = None
    passages: tuple[Passage, ...] | None = None
    quote: Quote | None = None
    generation: Generation | None = None
    traced: Mapping[str, Any] = field(default_factory=dict)
    setup_ms: float = 0.0


def listed_scores(hits: Sequence[Hit]) -> ScoreSource:
    """A stage's scores as far as its list tells them (what fusion reads from an input that
    declares no `scores`): s(d) is d's score in the list, and a chunk not in it gets the list's
    lowest score (a bound: the stage ranked it no higher); the range is the fused candidates'
    (`whole_corpus=False`), so weighted fusion normalises

        (s(d) - min_candidates) / (max_candidates - min_candidates)."""
    scores = {h.chunk_id: float(h.score) for h in hits}
    floor = min(scores.values(), default=0.0)
    return ScoreSource(lambda ids: [scores.get(c, floor) for c in ids], whole_corpus=False)


def listed(inputs: Mapping[str, StageOutput]) -> StageOutput:
    """The list a stage that consults a decision reads: its first input (an empty one when it
    has none)."""
    return next(iter(inputs.values()), StageOutput())


def consulted(inputs: Mapping[str, StageOutput]) -> Decision:
    """The decision a stage consults: the last input that carries one (passed, when none does)."""
    found = [o.decision for o in inputs.values() if o.decision is not None]
    return found[-1] if found else Decision(False, "")


class Stage(Protocol):
    name: str
    kind: Kind

    def params(self) -> dict[str, Any]: ...

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput: ...


class ListStage:
    """A stage that reorders, filters or rescores the one list before it: it implements
    `apply(query, hits) -> (hits, notes)`, and `run` hands it its input's hits."""

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        raise NotImplementedError

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        hits = [h for output in inputs.values() for h in output.hits]
        kept, notes = self.apply(query, hits)
        return StageOutput(tuple(kept), tuple(notes))


def own_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "", (f"{name}'s own score: higher is a closer match within this question's list; its scale "
                f"is the stage's. {NOT_A_PROBABILITY}")


def everywhere(index: Any) -> bool:
    return True


@dataclass(frozen=True)
class Entry:
    """One row of a table of stages:

    make            (index, config, bm25) -> the stage these settings ask for, or None when
                    they switch it off (MMR without a λ, a cap of 0)
    describe_score  (stage name, its params) -> (glossary term, what the score of the hits it
                    passes on is), read from a trace alone, for the UI
    available       index -> whether it can run on this index (and in this install, where what it
                    needs follows from the index: a neural retriever's embedder)
    needs           config -> what the stage needs that these settings (and this install) lack, ''
                    when nothing: the generated-words retrievers need a generator that can run (the
                    bundled one installed, or an endpoint the user named); None for the rest.
                    Where `runs` says no, `make` raises a ConfigError that says what to do; the
                    web offers only the stages that run
    term            the glossary term that explains the stage (the ask page's link per stage, the
                    front page's per family); '' when the term of its score says it (`glossary`)
    label           how the settings form and the lab name it; '' for its name in capitals
                    (`title`): a neural retriever is named after its embedder as given
    build           (name, index, building) -> the index with the stage's own part added, for a
                    stage that reads more than the term counts every index has (LSA's fitted
                    model, an embedder's vectors): the indexer calls it for each retriever an
                    index is built for (glassrag/retrieve/__init__.py `index_parts`); None for
                    the rest
    """

    make: Callable[..., Any]
    describe_score: Callable[[str, Mapping[str, Any]], tuple[str, str]] = own_score
    available: Callable[[Any], bool] = everywhere
    build: Callable[..., Any] | None = None
    term: str = ""
    needs: Callable[[Any], str] | None = None
    label: str = ""

    def runs(self, index: Any, config: Any = None) -> bool:
        """Whether the stage can run on `index` with `config` (the index's own when None): the
        index has what it reads (`available`) and nothing it `needs` is missing."""
        return self.available(index) and not (self.needs and self.needs(config or index.config))

    def glossary(self, name: str, params: Mapping[str, Any]) -> str:
        """The glossary term of stage `name` with `params` made by this entry: its declared
        `term`, else its score's (`describe_score`), else ''."""
        return self.term or self.describe_score(name, params)[0]

    def title(self, name: str) -> str:
        """How the settings form and the lab name stage `name`: its `label`, else its name in
        capitals."""
        return self.label or name.upper()


def keeps_scores(what: str) -> Callable[[str, Mapping[str, Any]], tuple[str, str]]:
    """The score description of a stage that reorders or filters without rescoring."""

    def describe(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
        return "", (f"The score of the stage before {name}: {what}, it does not rescore. "
                    f"{NOT_A_PROBABILITY}")

    return describe
