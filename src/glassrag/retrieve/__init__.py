"""Retrievers: the stages that start from the analysed question and rank every chunk.

A retriever meets the one stage contract (glassrag/stage.py: `name`, `kind`, `params()`,
`run(query, inputs) -> StageOutput`; its inputs are empty) and adds `searched`, the number of
chunks it scored; its output declares its score of any chunk when it has one (`scores`). Its
`params()` hold every setting it reads, so a trace records them and the sweep's stage cache
(glassrag/stage_cache.py) keys on them.

BM25, BM25 with RM3 feedback, BM25 with a generator's words (retrieve/generated.py), LSA and
the pg-* retrievers (SQL over an index in PostgreSQL, glassrag/retrieve/postgres.py) and ray-bm25
(BM25 over a sharded index's shards on Ray, glassrag/retrieve/shards.py) are looked
up by name in RETRIEVERS, one `Entry` each: how to make it, what its score is (`describe_score`,
for the UI) and where it can run (`available`); a neural retriever exists for each embedding model an index was built with and is named
after it (`NEURAL`), and over a sharded index one more, ray-NAME, searching NAME's vectors on the
shards (`shards.dense_entry`). An entry whose retriever needs a part of its own in the index (LSA's
model, an embedder's vectors) builds it (`build`); `index_parts` says which an index built with
given settings needs. Adding a retriever is one class and one entry here.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from glassrag.config import Config
from glassrag.errors import ConfigError, UnknownNameError
from glassrag.lexical.bm25 import BM25
from glassrag.retrieve import bm25, generated, lsa, neural, rm3, shards
from glassrag.retrieve import postgres as pg
from glassrag.retrieve.base import Entry, Retriever
from glassrag.retrieve.neural import NeuralRetriever
from glassrag.retrieve.postgres import PG_RETRIEVERS
from glassrag.store.base import Index

RETRIEVERS: dict[str, Entry] = {
    "bm25": Entry(bm25.BM25Retriever, bm25.describe_score, term="BM25"),
    "bm25-rm3": Entry(rm3.RM3Retriever, rm3.describe_score, term="BM25"),
    **{name: Entry(generated.maker(name), generated.describe_score, term="BM25", needs=generated.unavailable)
       for name in generated.PROMPTS},
    "lsa": Entry(lsa.LSARetriever, lsa.describe_score, lsa.has_lsa, lsa.build, term="LSA"),
    **{name: Entry(made, pg.describe_score, made.runs_on, term=made.term) for name, made in PG_RETRIEVERS.items()},
    "ray-bm25": Entry(shards.ShardedBM25, shards.describe_score, shards.is_sharded, term="BM25"),
}
# the retriever of each embedder an index was built with (available where it has that embedder)
NEURAL = Entry(NeuralRetriever, neural.describe_score, build=neural.build, term="dense")

__all__ = ["NEURAL", "RETRIEVERS", "Entry", "Retriever", "available", "check_retrievers", "describe_score",
           "index_parts", "make_retriever", "offered", "NeuralRetriever"]


def available(postgres: bool, embeddings: Iterable[str]) -> tuple[str, ...]:
    """The retrievers an index can run: the pg-* ones only in PostgreSQL, and one per embedder
    (two: ray-NAME searches NAME's vectors where the index is sharded, as ray-bm25 searches BM25)."""
    embedders = tuple(embeddings)
    return (*(n for n in RETRIEVERS if postgres or n not in PG_RETRIEVERS), *embedders,
            *map(shards.dense_name, embedders))


def offered(index: Index, config: Config | None = None) -> tuple[str, ...]:
    """The retrievers `index` can run with `config` (its own settings when None), each entry
    asked (`runs`: available on the index, nothing it needs missing), in the table's order,
    then one per embedder: what the web's settings form offers (with the generator the
    server was started with)."""
    sharded = tuple(map(shards.dense_name, index.embeddings)) if shards.is_sharded(index) else ()
    return (*(n for n, e in RETRIEVERS.items() if e.runs(index, config)), *index.embeddings, *sharded)


def index_parts(config: Config) -> list[tuple[str, Callable[..., Index]]]:
    """The retrievers whose own part an index built with `config` holds, each with its entry's
    `build`: every fused or observed retriever whose entry has one, in the table's order, then
    the neural retriever of each embedder of neural.models."""
    wanted = {*config.retrieve.retrievers, *config.retrieve.observe}
    own = [(name, e.build) for name, e in RETRIEVERS.items() if e.build is not None and name in wanted]
    embedders = dict.fromkeys(map(neural.retriever_name, config.neural.models))
    return [*own, *((name, NEURAL.build) for name in embedders if NEURAL.build is not None)]


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """(glossary term, what the score is) of retriever `name` with `params`, as its entry says."""
    if name not in RETRIEVERS and params.get("served_by") == "ray" and shards.embedder_of(name):
        return shards.describe_dense_score(name, params)
    return RETRIEVERS.get(name, NEURAL).describe_score(name, params)


def check_retrievers(config: Config, names: tuple[str, ...], where: str) -> None:
    """ConfigError unless retrieve.retrievers names at least one retriever, each once (so does
    retrieve.observe), and every fused or observed name is one this index has (`names`, from
    `available`): checked when an index is built, so settings that would break every later
    ask are never stored (issue 28.10)."""
    r = config.retrieve
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
        raise ConfigError(f"{what} ({where})",
                          f"this index can run: {', '.join(names)} (a neural retriever exists when the index "
                          "is built with --embedder; pg-* ones when it is in PostgreSQL)")


def make_retriever(name: str, index: Index, config: Config, bm25: BM25) -> Retriever:
    """Retriever `name` over `index` with `config`'s settings; UnknownNameError lists the
    names this index has."""
    if name in RETRIEVERS:
        made: Retriever = RETRIEVERS[name].make(index, config, bm25)
        return made
    if name in index.embeddings:
        return NeuralRetriever(index, config, name)
    embedder = shards.embedder_of(name)
    if embedder is not None and embedder in index.embeddings:
        sharded: Retriever = shards.dense_entry(embedder).make(index, config, bm25)
        return sharded
    raise UnknownNameError("retriever", name, [*RETRIEVERS, *index.embeddings,
                                               *(map(shards.dense_name, index.embeddings) if shards.is_sharded(index) else ())])
