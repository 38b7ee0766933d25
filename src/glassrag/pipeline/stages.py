"""The configured list: which stages a question goes through after its retrievers, each made
by its table's entry from the settings, and every table of stages an index has by the kind of
stage it makes (`tables(index)`: the index's retrievers, retrieve/__init__.py `retrievers`, then
the fixed `TABLES`; what the contract test runs over and what the web asks to explain a stage of
a trace).

The stage contract itself is in glassrag/stage.py."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from glassrag.config import Config
from glassrag.fuse import FUSERS
from glassrag.gate.stage import GATES
from glassrag.generate import GENERATORS
from glassrag.lexical.bm25 import BM25
from glassrag.present.answer import ANSWERS
from glassrag.read.budget import BUDGETS
from glassrag.read.extractive import READERS
from glassrag.rerank import RERANKERS, auto_reranker, chosen
from glassrag.rerank.cap import CAPS
from glassrag.rerank.matter import MATTER
from glassrag.rerank.mmr import MMRS
from glassrag.rerank.versions import VERSIONS
from glassrag.rerank.window import WINDOWS
from glassrag.retrieve import retrievers
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, Stage
from glassrag.store.base import ChunkDocs, ChunkTexts, Index

__all__ = ["AFTER_RETRIEVAL", "RERANKERS", "TABLES", "ChunkDocs", "ChunkTexts", "Stage", "Step", "after_retrieval",
           "auto_reranker", "configured", "entry_of", "input_of", "tables"]

# every table of stages after the retrievers (whose table is a function of the index: `tables`),
# by the kind of the stages its entries make, in the order they run
TABLES: dict[Kind, Mapping[str, Entry]] = {
    Kind.FUSE: FUSERS, Kind.VERSIONS: VERSIONS, Kind.FILTER: MATTER,
    Kind.WINDOW: WINDOWS, Kind.RERANK: RERANKERS, Kind.MMR: MMRS, Kind.CAP: CAPS,
    # the gate's glossary term, declared here while glassrag/gate/ is reworked (issue 50.5)
    Kind.GATE: {name: replace(entry, term=entry.term or "gate") for name, entry in GATES.items()},
    Kind.BUDGET: BUDGETS, Kind.SELECT: ANSWERS, Kind.READ: READERS, Kind.GENERATE: GENERATORS,
}
# the kinds of stage between the retrievers and the gate, in the order they run: fusion reads
# every fused retriever, each later one the list of the last of these that runs before it
AFTER_RETRIEVAL = (Kind.FUSE, Kind.VERSIONS, Kind.FILTER, Kind.WINDOW, Kind.RERANK, Kind.MMR, Kind.CAP)
# the stages after the gate by kind, with the stage whose list each reads ("ranked": the last
# ranking, which the gate reads too) and the stages whose decision it consults
AFTER_GATE = ((Kind.BUDGET, "budget", "ranked", ()), (Kind.SELECT, "answer", "budget", ("gate",)),
              (Kind.READ, "read", "budget", ("gate",)), (Kind.GENERATE, "generate", "budget", ("answer",)))


def tables(index: Index) -> dict[Kind, Mapping[str, Entry]]:
    """Every table of stages `index` has, by kind, in the order they run: its retrievers (those
    of every index, its store's, one per embedder it holds) and the fixed TABLES."""
    return {Kind.RETRIEVE: retrievers(index), **TABLES}


@dataclass(frozen=True)
class Step:
    """A stage in the configured list, the stages whose lists it reads (None: the one before
    it; the trace records them as its inputs) and those whose decision it consults besides."""

    stage: Stage
    reads: tuple[str, ...] | None = None
    consults: tuple[str, ...] = ()


def configured(index: Index, config: Config, bm25: BM25, every_signal: bool = False,
               read_to_decide: bool = False) -> tuple[list[Step], list[str]]:
    """Every stage after the retrievers, in the order they run, and the notes of what was
    decided for them: `after_retrieval`'s, then the gate (on the last ranking, and the trace so
    far), the budget (the last ranking, whatever the gate decided), the answer and the reader
    (the packed chunks; each consults the gate) and the generator when it is on (the packed
    chunks; it consults the answer). `every_signal`: the gate measures every signal (calibration);
    `read_to_decide`: only as far as its decision needs (answering one question)."""
    steps, notes = after_retrieval(index, config, bm25)
    ranked = (steps[-1].stage.name if steps else config.retrieve.retrievers[0],)
    gate = TABLES[Kind.GATE]["gate"].make(index, config, bm25, every_signal=every_signal,
                                            read_to_decide=read_to_decide)
    steps.append(Step(gate, ranked))
    for kind, name, reads, consults in AFTER_GATE:
        stage = TABLES[kind][name].make(index, config, bm25)
        if stage is not None:
            steps.append(Step(stage, ranked if reads == "ranked" else (reads,), consults))
    return steps, notes


def input_of(steps: list[Step], first: str, kind: str) -> str:
    """The name of the stage (in the trace) whose list a stage of `kind` reads among `steps`
    (the configured list after the retrievers, `first` the first fused retriever), whether or
    not a stage of that kind runs in them: what it reads when it runs, else the last stage of
    a kind before it in AFTER_RETRIEVAL (the gate and the budget: the last of them all), else
    `first`. So the reranker's training rows are read from the list the reranker receives,
    with the reranker itself switched off. Fusion reads every fused retriever: ValueError."""
    of = Kind.of(kind)
    if of is None or of not in TABLES or of == Kind.FUSE:
        raise ValueError(f"a stage of kind {kind!r} does not read one list; kinds that do: "
                         f"{', '.join(k for k in TABLES if k != Kind.FUSE)}")
    for i, step in enumerate(steps):
        if step.stage.kind == of:
            return (step.reads or (steps[i - 1].stage.name if i else first,))[-1]
    after = {k: reads for k, _, reads, _ in AFTER_GATE}
    if of in after and after[of] != "ranked":
        return after[of]
    order = AFTER_RETRIEVAL.index(of) if of in AFTER_RETRIEVAL else len(AFTER_RETRIEVAL)
    before = [s.stage.name for s in steps if s.stage.kind in AFTER_RETRIEVAL[:order]]
    return before[-1] if before else first


def after_retrieval(index: Index, config: Config, bm25: BM25) -> tuple[list[Step], list[str]]:
    """The stages between the retrievers and the gate that `config` asks for, in the order they
    run (fusion reads every fused retriever, each later stage the one before it), and the notes
    of what was decided for them (which reranker `auto` chose, and why)."""
    fused = config.retrieve.retrievers
    method, notes = chosen(config.rerank.method, index.extra.get("reranker"))
    names = {Kind.FUSE: config.fuse.method if len(fused) > 1 else None, Kind.VERSIONS: "versions",
             Kind.FILTER: "matter", Kind.WINDOW: "window", Kind.RERANK: None if method == "none" else method,
             Kind.MMR: "mmr", Kind.CAP: "cap"}
    steps = []
    for kind, name in ((k, names[k]) for k in AFTER_RETRIEVAL):
        stage = None if name is None else TABLES[kind][name].make(index, config, bm25)
        if stage is not None:
            steps.append(Step(stage, tuple(fused) if kind == Kind.FUSE else None))
    return steps, notes


def entry_of(name: str, kind: str, params: Mapping[str, Any], offered: Mapping[str, Entry]) -> Entry | None:
    """The table entry that made the stage of a trace (`name`, `kind`, `params`) on an index
    whose retrievers are `offered` (retrieve/__init__.py `retrievers(index)`): a retriever (also
    when observed) by its name among them, a fusion or a reranker by its `method`, any other
    stage by its name in its kind's table."""
    if kind in (Kind.RETRIEVE, Kind.OBSERVE):
        return offered.get(name)
    of = Kind.of(kind)
    table = TABLES.get(of, {}) if of is not None else {}
    return table.get(str(params.get("method", name)))
