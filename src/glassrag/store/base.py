"""What an index holds, the interface every storage backend implements, and the views of an
index the stages read (chunk id → document, chunk id → text)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol, Sequence

import numpy as np

from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.ingest import versions
from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import TermCounts
from glassrag.schema import Chunk, Document

FORMAT_VERSION = 2  # 2: texts stored once and read by offset, arrays memory-mapped, BM25 stored


@dataclass
class Embedded:
    """One neural embedder's vectors for every chunk (rows in chunk order) and the
    parameters that rebuild its query encoder."""

    name: str
    params: dict[str, Any]
    vectors: np.ndarray


def parse_date(value: Any) -> dt.date | None:
    """A document's `date` metadata as a date (its first ten characters, ISO), or None."""
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


@dataclass
class Stored:
    """What ingest computed over the whole corpus so that opening an index needs no pass
    over it: BM25 weights for the k1 and b it was built with, the superseded documents,
    the newest document date, and how many chunks each document has."""

    bm25: tuple[float, float, np.ndarray] | None = None  # (k1, b, weights in tf.data order)
    superseded: dict[str, str] = field(default_factory=dict)
    newest_date: str | None = None
    doc_chunks: Mapping[str, int] | None = None
    content_hashes: Mapping[str, str] | None = None
    chunkless: list[str] = field(default_factory=list)  # documents that gave no chunk
    folder: Path | None = None  # the generation it was read from
    counts: Any = None  # the TermCounts read from it (unchanged if the same object is written)


@dataclass
class Index:
    """Everything a pipeline needs to answer questions over one corpus. `documents` and
    `chunks` are a dict and a list when ingest builds an index, and tables read on demand
    (glassrag/store/tables.py) when a store opens one."""

    config: Config
    documents: Mapping[str, Document]
    chunks: Sequence[Chunk]
    counts: TermCounts
    lsa: LSA | None
    extra: dict[str, Any] = field(default_factory=dict)
    embeddings: dict[str, Embedded] = field(default_factory=dict)
    stored: Stored | None = field(default=None, compare=False, repr=False)
    sources: dict[str, dict] = field(default_factory=dict)  # BEIR corpus file -> sha256, documents

    def __post_init__(self) -> None:
        a = self.config.analyze
        self.analyzer = Analyzer(a.stopwords, a.stem, a.identifiers)
        if self.lsa is not None:
            self.lsa.analyzer = self.analyzer
        self._position: Mapping[str, int] | None = None
        self._superseded: dict[str, str] | None = None
        self._doc_chunks: Mapping[str, int] | None = None

    @property
    def position(self) -> Mapping[str, int]:
        """chunk id -> its row; a binary search over stored ids for a stored index."""
        if self._position is None:
            table = getattr(self.chunks, "positions", None)
            self._position = table if table is not None else {c.id: i for i, c in enumerate(self.chunks)}
        return self._position

    def chunk(self, chunk_id: str) -> Chunk:
        return self.chunks[self.position[chunk_id]]

    def around(self, chunk_id: str, width: int) -> list[Chunk]:
        """The chunks up to `width` places before and after `chunk_id` in its document, itself
        included, in order (an index keeps each document's chunks together, in order)."""
        row, chunks = self.position[chunk_id], self.chunks
        here = chunks[row]
        out = []
        for r in range(max(0, row - width), min(len(chunks), row + width + 1)):
            c = chunks[r]
            if c.doc_id == here.doc_id and abs(c.position - here.position) <= width:
                out.append(c)
        return out

    def chunk_id(self, row: int) -> str:
        id_of = getattr(self.chunks, "id_of", None)
        return id_of(row) if id_of is not None else self.chunks[row].id

    def chunk_words(self, chunk_id: str) -> int:
        """Whitespace-separated words of a chunk (what the context budget counts)."""
        row = self.position[chunk_id]
        words = getattr(self.chunks, "words", None)
        return int(words[row]) if words is not None else len(self.chunks[row].text.split())

    def superseded(self) -> dict[str, str]:
        """old document id -> the indexed document that supersedes it."""
        if self._superseded is None:
            self._superseded = self.stored.superseded if self.stored else versions.superseded(self.documents)
        return self._superseded

    def newest_date(self) -> dt.date | None:
        if self.stored is not None:
            return parse_date(self.stored.newest_date) if self.stored.newest_date else None
        return max((d for d in (parse_date(doc.metadata.get("date"))
                                for doc in self.documents.values()) if d), default=None)

    def chunks_in(self, doc_id: str) -> int:
        """How many chunks document `doc_id` has in this index."""
        if self._doc_chunks is None:
            if self.stored is not None and self.stored.doc_chunks is not None:
                self._doc_chunks = self.stored.doc_chunks
            else:
                counts: dict[str, int] = {}
                for c in self.chunks:
                    counts[c.doc_id] = counts.get(c.doc_id, 0) + 1
                self._doc_chunks = counts
        return self._doc_chunks.get(doc_id, 0)

    def content_hashes(self) -> Mapping[str, str]:
        """document id -> content hash; from a stored array for a stored index, so a re-ingest
        can tell what changed without reading the documents."""
        if self.stored is not None and self.stored.content_hashes is not None:
            return self.stored.content_hashes
        return {d.id: d.content_hash for d in self.documents.values()}

    def bm25_weights(self, k1: float, b: float) -> np.ndarray | None:
        """The BM25 weights ingest stored, when they were computed with this k1 and b."""
        if self.stored is None or self.stored.bm25 is None:
            return None
        sk1, sb, weights = self.stored.bm25
        return weights if (sk1, sb) == (float(k1), float(b)) else None


class IndexStore(Protocol):
    """Where an index lives. `write` replaces the whole index atomically: a reader sees
    the old index or the new one, never a mixture; `read` raises StoreError with advice."""

    def exists(self) -> bool: ...

    def write(self, index: Index) -> None: ...

    def read(self) -> Index: ...


class ChunkDocs(Mapping[str, str]):
    """chunk id -> document id, looked up when asked (no per-chunk map is built)."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def __getitem__(self, chunk_id: str) -> str:
        return self.index.chunk(chunk_id).doc_id

    def __iter__(self) -> Iterator[str]:
        return iter(self.index.position)

    def __len__(self) -> int:
        return len(self.index.chunks)


class ChunkTexts(ChunkDocs):
    """chunk id -> its text, read when asked."""

    def __getitem__(self, chunk_id: str) -> str:  # type: ignore[override]
        return self.index.chunk(chunk_id).text
