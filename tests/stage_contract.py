"""The one contract test every entry of every table of stages inherits (issue 29; PyTerrier's
TransformerTestCase is the model): glassrag/stage.py's contract checked on an index, over every
entry of every table that index has (glassrag/pipeline/stages.py `tables(index)`: its
retrievers are a function of it, the pg-* ones in PostgreSQL and a neural one per embedder it
holds), for the folder index of tests/test_stage_contract.py and the PostgreSQL one of
tests/store/test_stage_contract_pg.py, each with MiniLM's vectors. A new entry in a table gets
these tests without a line written for it; an entry that needs a setting to be switched on
names it in SWITCHED_ON.

The stages after the ranking pass on more than a list, each in its declared field of
StageOutput: the gate a decision (and the list it read, unless it declines), the answer its
passages and decision, the reader a quote, the generator a generation.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline import TABLES, tables
from glassrag.query import Query
from glassrag.rerank.features import FEATURES
from glassrag.retrieve import RETRIEVERS, table
from glassrag.schema import Generation, Hit, Passage, Quote, StageTrace
from glassrag.schema.kind import Kind
from glassrag.stage import Decision, Entry, StageOutput

# the settings that choose each table's entry, or switch on a one-entry table's stage
SWITCHED_ON: dict[str, Any] = {
    "retrieve": lambda name: {"retrieve": {"retrievers": [name], "observe": []}},
    "fuse": lambda name: {"fuse": {"method": name}},
    "versions": lambda name: {"versions": {"mode": "demote"}},
    "filter": lambda name: {"filter": {"matter": True}},
    "window": lambda name: {"window": {"size": 1}},
    "rerank": lambda name: {"rerank": {"method": name}},
    "mmr": lambda name: {"mmr": {"relevance": 0.7}},
    "cap": lambda name: {"cap": {"per_document": 1}},
    "gate": lambda name: {},
    "budget": lambda name: {},
    "select": lambda name: {},
    "read": lambda name: {},
    "generate": lambda name: {"generate": {"enabled": True, "max_tokens": 8}},
}
# the kinds whose hits the stage ranks itself, 1, 2, …
RANKED_HERE = ("retrieve", "fuse", "versions", "filter", "window", "rerank", "mmr", "cap", "budget", "select")
PASSED = {"decision": Decision(False, "passed: the contract's gate")}
# a learned reranker's model with every weight equal: what the contract needs, no training
FLAT_MODEL = {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "std": [1.0] * len(FEATURES),
              "weights": [0.1] * len(FEATURES), "bias": 0.0}


# the embedders the contract's indexes hold vectors of (the bundled MiniLM)
EMBEDDERS = ("minilm",)


def every_entry(postgres: bool) -> list[tuple[str, str]]:
    """(kind, name) of every entry of every table an index in PostgreSQL (`postgres`) or in a
    folder has, holding the vectors of EMBEDDERS: what the contract tests are parametrised by
    before the index is built. `test_the_index_has_every_entry` checks that the index the
    tests are given has exactly these, so none is left out."""
    return [(Kind.RETRIEVE, name) for name in table(postgres, EMBEDDERS)] + \
        [(kind, name) for kind, entries in TABLES.items() for name in entries]


def ids(postgres: bool) -> list[str]:
    return [f"{kind}:{name}" for kind, name in every_entry(postgres)]


def entries_of(index: Any) -> set[tuple[str, str]]:
    """(kind, name) of every entry of every table `index` has."""
    return {(kind, name) for kind, entries in tables(index).items() for name in entries}


def check_offered(index: Any, kind: str, name: str, question: str) -> None:
    """`check_entry` on the entry `index`'s own tables hold under `name`."""
    check_entry(index, kind, name, tables(index)[Kind(kind)][name], question)


def made(index: Any, kind: str, name: str, entry: Entry) -> tuple[Any, Config]:
    """The stage `entry` makes from the settings that choose it, and those settings."""
    config = index.config.with_overrides(**SWITCHED_ON[kind](name))
    return entry.make(index, config, bm25_of(index, config)), config


def bm25_of(index: Any, config: Config) -> BM25:
    return BM25(index.counts, config.bm25.k1, config.bm25.b, index.bm25_weights(config.bm25.k1, config.bm25.b))


def inputs_for(index: Any, config: Config, kind: str, query: Query) -> dict[str, StageOutput]:
    """What the loop hands a stage of `kind`: nothing for a retriever, BM25's and LSA's outputs for
    fusion, the budget's (packed from BM25's) and a passing decision for the stages after it
    (the gate's for the answer and the reader, the answer's for the generator), BM25's for the rest."""
    if kind == "retrieve":
        return {}
    bm25 = RETRIEVERS["bm25"].make(index, config, bm25_of(index, config))
    out = {"bm25": bm25.run(query, {})}
    if kind == "fuse":
        out["lsa"] = RETRIEVERS["lsa"].make(index, config, None).run(query, {})
    if kind in ("select", "read", "generate"):
        packed = TABLES["budget"]["budget"].make(index, config, None).run(query, out)
        return {"budget": packed, "answer" if kind == "generate" else "gate": StageOutput(**PASSED)}
    return out


def emptied(inputs: dict[str, StageOutput]) -> dict[str, StageOutput]:
    return {name: StageOutput(**PASSED) if out.decision else StageOutput() for name, out in inputs.items()}


def traced(inputs: dict[str, StageOutput]) -> list[StageTrace]:
    """The trace a trace-reading stage (the gate) is given: its inputs as retrievers' traces."""
    return [StageTrace(name, "retrieve", {}, ("analyze",), out.hits, len(out.hits), 0.0, out.notes)
            for name, out in inputs.items()]


def ran(stage: Any, query: Query, inputs: dict[str, StageOutput]) -> StageOutput:
    """`stage.run` as the loop calls it: a stage that reads the trace is given one."""
    if getattr(stage, "reads_trace", False):
        return stage.run(query, inputs, traced(inputs))
    return stage.run(query, inputs)


def check_entry(index: Any, kind: str, name: str, entry: Entry, question: str) -> None:
    """The contract of one entry on `index`:

    - `runs(index)` (`available(index)`, and nothing it `needs` missing) is a bool, and the
      truth: where it says no, making the stage fails
      with a ConfigError that says what to do; where yes, it is made;
    - `params()` is JSON-safe: it survives a round trip through JSON unchanged;
    - `run` returns a StageOutput of Hits ranked 1, 2, … by the stage itself (the gate passes
      its input's on), each chunk once and in the index, with notes as strings, and what it
      declares beyond the list in its field (`produced`); the same input gives the same output;
    - on empty input (a question with no known word for a retriever, empty lists for the rest)
      it returns an output, empty unless it is a retriever;
    - `describe_score(name, params)` says what its score is.
    """
    if kind == "generate":
        pytest.importorskip("llama_cpp", reason="the bundled generator needs pip install 'glassrag[generate]'")
    if kind == "rerank" and name == "learned" and not index.extra.get("reranker"):
        assert entry.available(index) is False
        with pytest.raises(ConfigError, match="rerank-train"):
            made(index, kind, name, entry)
        index.extra["reranker"] = FLAT_MODEL  # trained, as far as the contract cares
    available = entry.runs(index)
    assert isinstance(available, bool)
    if not available:
        with pytest.raises(ConfigError) as refused:
            made(index, kind, name, entry)
        assert refused.value.hint, f"{kind}:{name} refuses this index without saying what to do"
        return
    stage, config = made(index, kind, name, entry)
    assert stage is not None, f"{kind}:{name} was not made although its setting is switched on"
    assert isinstance(stage.kind, Kind), f"{kind}:{name} declares its kind as {stage.kind!r}, not a Kind"
    assert stage.kind == kind and isinstance(stage.name, str) and stage.name
    params = stage.params()
    assert json.loads(json.dumps(params)) == params, f"{kind}:{name} params are not JSON-safe"

    tokens = index.analyzer(question)
    inputs = inputs_for(index, config, kind, Query(question, tokens))
    first = ran(stage, Query(question, tokens), inputs)
    if first.setup_ms:  # it loaded something for its first question, and said so: compare from the second
        first = ran(stage, Query(question, tokens), inputs)
    again = ran(stage, Query(question, tokens), inputs_for(index, config, kind, Query(question, tokens)))
    assert isinstance(first, StageOutput) and isinstance(first.hits, tuple) and isinstance(first.notes, tuple)
    assert all(isinstance(n, str) for n in first.notes)
    assert json.loads(json.dumps(dict(first.traced))) == first.traced, f"{kind}:{name} traces what JSON cannot hold"
    assert produced(kind, first), f"{kind}:{name} does not pass on what its kind declares"
    if kind in RANKED_HERE:
        assert first.hits, f"{kind}:{name} passed nothing on for {question!r}"
        assert [h.rank for h in first.hits] == list(range(1, len(first.hits) + 1))
        assert all(isinstance(h, Hit) and h.stage == stage.name for h in first.hits)
        assert len({h.chunk_id for h in first.hits}) == len(first.hits)
        assert all(h.chunk_id in index.position for h in first.hits)
    elif kind == "gate":  # not calibrated here: it passes its input on whole
        assert first.hits == next(iter(inputs.values())).hits and not first.decision.declined
    else:
        assert first.hits == (), f"{kind}:{name} ranks nothing, yet passed hits on"
    assert _plain(first) == _plain(again), f"{kind}:{name} is not deterministic"

    if kind == "retrieve":
        empty = stage.run(Query("zzzqx", ["zzzqx"]), {})
        assert isinstance(empty, StageOutput) and all(h.score == 0 or np.isfinite(h.score) for h in empty.hits)
    else:
        empty = ran(stage, Query(question, tokens), emptied(inputs))
        assert isinstance(empty, StageOutput) and empty.hits == ()

    term, text = entry.describe_score(stage.name, params)
    assert isinstance(term, str) and isinstance(text, str) and len(text) > 20, f"{kind}:{name} says nothing"


def produced(kind: str, output: StageOutput) -> bool:
    """What a stage of `kind` declares beyond its list is there, of its type."""
    if kind == "gate":
        return isinstance(output.decision, Decision) and "signals" in output.traced
    if kind == "select":
        return isinstance(output.decision, Decision) and all(isinstance(p, Passage) for p in output.passages or [None])
    if kind == "read":
        return isinstance(output.quote, Quote)
    if kind == "generate":
        return isinstance(output.generation, Generation) and "given" in output.traced
    return output.decision is None and output.quote is None and output.generation is None


def _plain(output: StageOutput) -> tuple[Any, ...]:
    """An output's content, but for times (a generation's ms)."""
    generation = replace(output.generation, ms=0.0) if output.generation else None
    return (tuple(h.to_dict() for h in output.hits), output.notes, output.decision, output.passages, output.quote,
            generation, dict(output.traced))
