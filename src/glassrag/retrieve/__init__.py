"""Retrievers: the stages that start from the analysed question and rank every chunk.

A retriever satisfies the same contract as the stages after retrieval (`pipeline.Stage`:
`name`, `kind`, `params()`, `apply(query, hits)`; its input list is empty) and adds
`searched`, the number of chunks it scored. Its `params()` hold every setting it reads,
so a trace records them and the sweep's stage cache (glassrag/stage_cache.py) keys on them.

BM25, BM25 with RM3 feedback, LSA and the pg-* retrievers (SQL over an index in PostgreSQL,
glassrag/retrieve/postgres.py) are looked up by name in RETRIEVERS; a neural retriever exists
for each embedding model an index was built with and is named after it.
"""

from __future__ import annotations

from typing import Any, Iterable

from glassrag.config import Config
from glassrag.errors import ConfigError, UnknownNameError
from glassrag.lexical.bm25 import BM25
from glassrag.retrieve.base import Retriever
from glassrag.retrieve.bm25 import BM25Retriever
from glassrag.retrieve.lsa import LSARetriever
from glassrag.retrieve.neural import NeuralRetriever
from glassrag.retrieve.postgres import PG_RETRIEVERS
from glassrag.retrieve.rm3 import RM3Retriever
from glassrag.store.base import Index

RETRIEVERS: dict[str, Any] = {"bm25": BM25Retriever, "bm25-rm3": RM3Retriever, "lsa": LSARetriever,
                              **PG_RETRIEVERS}

__all__ = ["RETRIEVERS", "Retriever", "available", "check_retrievers", "make_retriever", "NeuralRetriever"]


def available(postgres: bool, embeddings: Iterable[str]) -> tuple[str, ...]:
    """The retrievers an index can run: the pg-* ones only in PostgreSQL, and one per embedder."""
    return (*(n for n in RETRIEVERS if postgres or n not in PG_RETRIEVERS), *embeddings)


def check_retrievers(config: Config, names: tuple[str, ...], where: str) -> None:
    """ConfigError unless retrieve.retrievers names at least one retriever and every fused or
    observed name is one this index has (`names`, from `available`): checked when an index is
    built, so settings that would break every later ask are never stored (issue 28.10)."""
    r = config.retrieve
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
        return RETRIEVERS[name](index, config, bm25)
    if name in index.embeddings:
        return NeuralRetriever(index, config, name)
    raise UnknownNameError("retriever", name, [*RETRIEVERS, *index.embeddings])
