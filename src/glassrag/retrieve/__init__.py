"""Retrievers: the stages that start from the analysed question and rank every chunk.

A retriever meets the one stage contract (glassrag/stage.py: `name`, `kind`, `params()`,
`run(query, inputs) -> StageOutput`; its inputs are empty) and adds `searched`, the number of
chunks it scored; its output declares its score of any chunk when it has one (`scores`). Its
`params()` hold every setting it reads, so a trace records them and the sweep's stage cache
(glassrag/stage_cache.py) keys on them.

Which retrievers there are is a function of the index (`table`, `retrievers`): every index has
RETRIEVERS' (BM25, BM25 with RM3 feedback, BM25 with a generator's words from
retrieve/generated.py, LSA, and ray-bm25, BM25 over a sharded index's shards on Ray,
retrieve/shards.py); an index in PostgreSQL has the pg-* ones too (SQL over the index,
retrieve/postgres.py `ENTRIES`); and an index holding an embedder's vectors has a neural
retriever named after it (retrieve/neural.py `entry`) and a ray-NAME one, searching those vectors on
a sharded index's shards (retrieve/shards.py `dense_entry`). Every one is an `Entry` of the same
shape: how to make it from (index, config, bm25), what its score is (`describe_score`, for the
UI), whether it can run on this index and install (`available`, `needs`). An entry whose
retriever needs a part of its own in the index (LSA's model, an embedder's vectors) builds it
(`build`); `index_parts` says which an index built with given settings needs. Adding a
retriever is one class and one entry in RETRIEVERS.
"""

from __future__ import annotations

from typing import Callable, Iterable

from glassrag.config import Config
from glassrag.errors import ConfigError, UnknownNameError
from glassrag.lexical.bm25 import BM25
from glassrag.retrieve import bm25, generated, lsa, neural, rm3, shards
from glassrag.retrieve import postgres as pg
from glassrag.retrieve.base import Entry, Retriever
from glassrag.retrieve.neural import NeuralRetriever
from glassrag.store.base import Index

# the retrievers every index has (each says itself where it can run: `available`, `needs`)
RETRIEVERS: dict[str, Entry] = {
    "bm25": Entry(bm25.BM25Retriever, bm25.describe_score, term="BM25"),
    "bm25-rm3": Entry(rm3.RM3Retriever, rm3.describe_score, term="BM25"),
    **{name: Entry(generated.maker(name), generated.describe_score, term="BM25", needs=generated.unavailable)
       for name in generated.PROMPTS},
    "lsa": Entry(lsa.LSARetriever, lsa.describe_score, lsa.has_lsa, lsa.build, term="LSA"),
    "ray-bm25": Entry(shards.ShardedBM25, shards.describe_score, shards.is_sharded, term="BM25"),
}
# what a name no table holds may have meant (the hint of the error that refuses it)
ELSEWHERE = "a neural retriever exists when the index is built with --embedder; pg-* ones when it is in PostgreSQL"

__all__ = ["RETRIEVERS", "Entry", "Retriever", "check_retrievers", "embedders", "index_parts", "make_retriever",
           "offered", "planned", "retrievers", "table", "NeuralRetriever"]


def table(postgres: bool, embedders: Iterable[str]) -> dict[str, Entry]:
    """Every retriever of an index in PostgreSQL (`postgres`) or in a folder, holding the
    vectors of `embedders`, by name: RETRIEVERS', then the pg-* ones where it is in PostgreSQL,
    then one per embedder, named after it, and its ray-NAME (NAME's vectors searched on a
    sharded index's shards, available only there, as ray-bm25 is); each an `Entry` of the same
    shape, in this order (the settings form's)."""
    names = tuple(embedders)
    return {**RETRIEVERS, **(pg.ENTRIES if postgres else {}), **{name: neural.entry(name) for name in names},
            **{shards.dense_name(name): shards.dense_entry(name) for name in names}}


def retrievers(index: Index) -> dict[str, Entry]:
    """The retrievers `index` has (`table` of its store and its embedders): what the pipeline
    makes its retrievers from, the web describes a trace's with, and the contract test checks."""
    return table(pg.in_postgres(index), index.embeddings)


def embedders(config: Config) -> tuple[str, ...]:
    """The neural retrievers an index built with `config` holds: one per embedder of
    neural.models, by `neural.retriever_name`."""
    return tuple(dict.fromkeys(map(neural.retriever_name, config.neural.models)))


def planned(config: Config, postgres: bool) -> dict[str, Entry]:
    """The retrievers of the index `config` builds (in PostgreSQL when `postgres`): what an
    ingest checks its settings against before it reads a file."""
    return table(postgres, embedders(config))


def offered(index: Index, config: Config | None = None) -> tuple[str, ...]:
    """The retrievers `index` can run with `config` (its own settings when None), each entry
    asked (`runs`: available on the index and this install, nothing it needs missing), in the
    table's order: what the web's settings form offers (with the generator the server was
    started with)."""
    return tuple(name for name, entry in retrievers(index).items() if entry.runs(index, config))


def index_parts(config: Config) -> list[tuple[str, Callable[..., Index]]]:
    """The retrievers whose own part an index built with `config` holds, each with its entry's
    `build`, in the table's order: every fused or observed retriever whose entry has one, and
    the neural retriever of each embedder of neural.models (its part, the vectors, is what
    makes the index have it)."""
    wanted = {*config.retrieve.retrievers, *config.retrieve.observe, *embedders(config)}
    return [(name, e.build) for name, e in planned(config, False).items() if e.build is not None and name in wanted]


def check_retrievers(config: Config, names: Iterable[str], where: str) -> None:
    """ConfigError unless retrieve.retrievers names at least one retriever, each once (so does
    retrieve.observe), and every fused or observed name is one this index has (`names`, its
    table's): checked when an index is built, so settings that would break every later ask are
    never stored (issue 28.10)."""
    r, names = config.retrieve, tuple(names)
    for field, listed in (("retrieve.retrievers", r.retrievers), ("retrieve.observe", r.observe)):
        twice = [n for n in dict.fromkeys(listed) if listed.count(n) > 1]
        if twice:  # fusing a list with itself would trace it twice and "fuse" one list
            raise ConfigError(f"retriever(s) {', '.join(map(repr, twice))} listed more than once in {field} "
                              f"({where})", f"name each retriever once, e.g. {field} = "
                              f"{list(dict.fromkeys(listed))!r}")
    unknown = [n for n in r.retrievers + r.observe if n not in names]
    if unknown or not r.retrievers:
        field = "retrieve.retrievers" if set(unknown) & set(r.retrievers) or not r.retrievers \
            else "retrieve.observe"
        what = (f"unknown retriever(s) {', '.join(map(repr, unknown))} in {field}" if unknown
                else "retrieve.retrievers is empty: nothing would feed the answer")
        raise ConfigError(f"{what} ({where})", f"this index can run: {', '.join(names)} ({ELSEWHERE})")


def make_retriever(name: str, index: Index, config: Config, bm25: BM25) -> Retriever:
    """Retriever `name` over `index` with `config`'s settings, made by its entry in the index's
    table; UnknownNameError lists the names this index has when it has none of that name (a
    pg-* one on a folder index, an embedder's it holds no vectors of)."""
    entries = retrievers(index)
    if name not in entries:
        raise UnknownNameError("retriever", name, list(entries))
    made: Retriever = entries[name].make(index, config, bm25)
    return made
