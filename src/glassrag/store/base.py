"""What an index holds, the interface every storage backend implements (the store, its chunk
table), and the views of an index the stages read (chunk id → document, chunk id → text)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol, Sequence, overload, runtime_checkable

import numpy as np

from glassrag.config import Config
from glassrag.dense.lsa import LSA
from glassrag.errors import StoreError
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


@dataclass
class Part:
    """A retriever's own index part, built by its table entry's `build` (glassrag/stage.py),
    when it has no field of its own (LSA's model and the embedders' vectors have theirs):
    JSON-safe parameters and named arrays. The folder store writes them as
    parts/<name>/params.json and <array>.npy, the PostgreSQL store as rows of `arrays` and
    meta `parts`; both read them back as they were written."""

    params: dict[str, Any]
    arrays: dict[str, np.ndarray]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Part):
            return NotImplemented
        return self.params == other.params and self.arrays.keys() == other.arrays.keys() and all(
            np.array_equal(a, other.arrays[k]) for k, a in self.arrays.items())


PART_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def checked_part(name: str, part: Part) -> Part:
    """`part` when its name and its arrays' names can name a folder and a file in every store;
    else StoreError (nothing is written)."""
    bad = [n for n in (name, *part.arrays) if not PART_NAME.fullmatch(n)]
    if bad:
        raise StoreError(f"index part {name!r}: {', '.join(map(repr, bad))} cannot name a stored file",
                         "name the retriever and its part's arrays with lowercase letters, digits, '.', '_' "
                         "or '-' (at most 64, the first a letter or a digit)")
    return part


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


@runtime_checkable
class ChunkTable(Protocol):
    """An index's chunks in index order (each document's together, in order), and what the
    stages read of them beyond a Sequence. A stored table answers from arrays it read at open
    (the folder's, store/tables.py; PostgreSQL's, store/pgtables.py); a table of chunks held in
    memory (`ListedChunks`, `store/spool.py`'s) answers None and `Index` works it out from the
    chunks themselves.

        ids        every chunk's id as UTF-8 bytes, in row order (hits are named from it), or None
        positions  chunk id -> row, or None
        words      every chunk's whitespace-separated word count, in row order, or None
        folder     the generation folder it was read from, or None: the folder store hard-links
                   its files when the same table is written again
        pg         the PostgreSQL store it was read from, or None: what the pg-* retrievers
                   search through (glassrag/retrieve/postgres.py)
        id_of(row) the id of the chunk in row `row`
    """

    ids: np.ndarray | None
    positions: Mapping[str, int] | None
    words: np.ndarray | None
    folder: Path | None
    pg: Any

    def __len__(self) -> int: ...

    def __getitem__(self, i: Any) -> Any: ...

    def __iter__(self) -> Iterator[Chunk]: ...

    def id_of(self, row: int) -> str: ...


class ChunkRows(Sequence[Chunk]):
    """What the chunk tables share: a Sequence whose subclasses give `__len__`, `_at(i)` (row
    i, 0 ≤ i < len) and `__iter__`; indexing, slicing and equality are here, and the
    `ChunkTable` members a table without stored arrays answers (None)."""

    ids: np.ndarray | None = None  # bytes, index order
    positions: Mapping[str, int] | None = None
    words: np.ndarray | None = None
    folder: Path | None = None
    pg: Any = None

    @overload
    def __getitem__(self, i: int) -> Chunk: ...

    @overload
    def __getitem__(self, i: slice) -> list[Chunk]: ...

    def __getitem__(self, i: int | slice) -> Chunk | list[Chunk]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"chunk {i} out of range ({n} chunks)")
        return self._at(i)

    def _at(self, i: int) -> Chunk:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def id_of(self, i: int) -> str:
        return self.ids[i].decode("utf-8") if self.ids is not None else self[i].id


class ListedChunks(ChunkRows):
    """A ChunkTable over chunks given as a list (an index put together in memory)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks

    def __len__(self) -> int:
        return len(self.chunks)

    def _at(self, i: int) -> Chunk:
        return self.chunks[i]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)


def chunk_table(chunks: Sequence[Chunk]) -> ChunkTable:
    """`chunks` as a ChunkTable: itself when it is one, else a `ListedChunks` over it."""
    return chunks if isinstance(chunks, ChunkTable) else ListedChunks(chunks)


@dataclass
class Index:
    """Everything a pipeline needs to answer questions over one corpus. `documents` and
    `chunks` are a spool or a dict and a `ChunkTable` when ingest builds an index, and tables
    read on demand (glassrag/store/tables.py) when a store opens one; chunks given as a list
    are made a `ListedChunks`."""

    config: Config
    documents: Mapping[str, Document]
    chunks: ChunkTable
    counts: TermCounts
    lsa: LSA | None
    extra: dict[str, Any] = field(default_factory=dict)
    embeddings: dict[str, Embedded] = field(default_factory=dict)
    stored: Stored | None = field(default=None, compare=False, repr=False)
    sources: dict[str, dict] = field(default_factory=dict)  # BEIR corpus file -> sha256, documents
    parts: dict[str, Part] = field(default_factory=dict)  # retriever name -> its own part (`Part`)

    def __post_init__(self) -> None:
        self.chunks = chunk_table(self.chunks)
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
            table = self.chunks.positions
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
        return self.chunks.id_of(row)

    def chunk_words(self, chunk_id: str) -> int:
        """Whitespace-separated words of a chunk (what the context budget counts)."""
        row = self.position[chunk_id]
        words = self.chunks.words
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
