"""What an index holds, and the interface every storage backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import TermCounts
from glassrag.schema import Chunk, Document

FORMAT_VERSION = 1


@dataclass
class Embedded:
    """One neural embedder's vectors for every chunk (rows in chunk order) and the
    parameters that rebuild its query encoder."""

    name: str
    params: dict[str, Any]
    vectors: np.ndarray


@dataclass
class Index:
    """Everything a pipeline needs to answer questions over one corpus."""

    config: Config
    documents: dict[str, Document]
    chunks: list[Chunk]
    counts: TermCounts
    lsa: LSA | None
    extra: dict[str, Any] = field(default_factory=dict)
    embeddings: dict[str, Embedded] = field(default_factory=dict)

    def __post_init__(self) -> None:
        a = self.config.analyze
        self.analyzer = Analyzer(a.stopwords, a.stem, a.identifiers)
        if self.lsa is not None:
            self.lsa.analyzer = self.analyzer
        self.position = {c.id: i for i, c in enumerate(self.chunks)}

    def chunk(self, chunk_id: str) -> Chunk:
        return self.chunks[self.position[chunk_id]]


class IndexStore(Protocol):
    """Where an index lives. `write` replaces the whole index atomically: a reader sees
    the old index or the new one, never a mixture; `read` raises StoreError with advice."""

    def exists(self) -> bool: ...

    def write(self, index: Index) -> None: ...

    def read(self) -> Index: ...
