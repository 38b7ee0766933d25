"""One stage contract (issue 29): what every stage of a question's way is, what it returns, and
the table entry that registers one.

A stage is built from its settings by its table entry, and then

    name: str          the trace's name for it ("bm25", "fuse", "rerank", "cap", "budget")
    kind: str          what it does ("retrieve", "fuse", "versions", "rerank", "mmr", "cap", "budget")
    params() -> dict   every setting it reads, JSON-safe: the trace records it and the stage
                       cache keys on it
    run(query, inputs) -> StageOutput

`inputs` maps the name of each stage it reads to that stage's output, in order: nothing for a
retriever (it starts from the analysed question), every fused retriever for fusion, the stage
before it for the rest. The loop (glassrag/pipeline/loop.py) chooses the inputs, runs the stage
and writes its trace; a stage never writes its own.

Every family of stages is a table of `Entry`s looked up by name (RETRIEVERS, FUSERS, RERANKERS,
and the one-entry tables of versions, MMR, the cap and the budget; glassrag/pipeline/stages.py
lists them all in `TABLES`). An entry says how to make the stage from the settings, where it can
run and what its score is, so the web asks the entry instead of deciding by a stage's name; a
retriever that needs a part of its own in the index says how to build it, so the indexer asks the
entry instead of testing the retrievers' names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Protocol, Sequence

from glassrag.query import Query
from glassrag.schema import Hit

NOT_A_PROBABILITY = "Not a probability that the answer is right."


@dataclass(frozen=True)
class ScoreSource:
    """A retriever's score for any chunk, and the range of its scores: over the whole
    corpus when `whole_corpus`, else over the candidates it is asked about (an approximate
    index that never scores every chunk)."""

    score: Callable[[Sequence[str]], Sequence[float]]  # chunk ids -> scores
    low: float = 0.0
    high: float = 0.0
    whole_corpus: bool = True


@dataclass(frozen=True)
class StageOutput:
    """What a stage passes on: its ranked hits, its notes for the trace, and what a later stage
    may read beyond the list: `scores`, the stage's score of a chunk outside its list (a
    retriever that scores every chunk declares it; weighted fusion reads it, and reads the
    list's own scores when it is None)."""

    hits: tuple[Hit, ...] = ()
    notes: tuple[str, ...] = ()
    scores: ScoreSource | None = None


class Stage(Protocol):
    name: str
    kind: str

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
    available       index -> whether it can run on this index (the web offers only those)
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


def keeps_scores(what: str) -> Callable[[str, Mapping[str, Any]], tuple[str, str]]:
    """The score description of a stage that reorders or filters without rescoring."""

    def describe(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
        return "", (f"The score of the stage before {name}: {what}, it does not rescore. "
                    f"{NOT_A_PROBABILITY}")

    return describe
