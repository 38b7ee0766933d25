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

from typing import Any

from glassrag.config import Config
from glassrag.errors import UnknownNameError
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

__all__ = ["RETRIEVERS", "Retriever", "make_retriever", "NeuralRetriever"]


def make_retriever(name: str, index: Index, config: Config, bm25: BM25) -> Retriever:
    """Retriever `name` over `index` with `config`'s settings; UnknownNameError lists the
    names this index has."""
    if name in RETRIEVERS:
        return RETRIEVERS[name](index, config, bm25)
    if name in index.embeddings:
        return NeuralRetriever(index, config, name)
    raise UnknownNameError("retriever", name, [*RETRIEVERS, *index.embeddings])
