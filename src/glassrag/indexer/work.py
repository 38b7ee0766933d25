"""Where an ingest's per-document work runs: here, one document after another (`HERE`), or on
a Ray cluster (glassrag/shard/ingest.py `RayWork`). The indexer asks its `Work` for the three
steps whose cost grows with the documents read, and does everything else itself, in the same
order either way, so an index built by either is the same index:

    read_files   hash every walked file; load, check and chunk the new and changed ones
                 (step 1, indexer/diff.py)
    analyse      the tokens of each new chunk's text, in order (step 3, indexer/counts.py)
    embed        the vectors each embedder of neural.models lacks in the embedding cache, put
                 there before the retrievers' parts are built (step 4): the build then finds
                 them cached; returns how many it embedded per retriever

What stays on the driver whatever the work: the walk, a BEIR corpus file's parse (one file),
the term counts' merge, the LSA fit (on the whole corpus's counts: one model for every shard)
and the write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Protocol

from glassrag.chunk.base import Chunker
from glassrag.indexer.diff import Before, Gathered, read_files
from glassrag.ingest.report import IngestReport, Progress
from glassrag.lexical.analyze import Analyzer
from glassrag.retrieve.base import Building
from glassrag.store.base import Index


class Work(Protocol):
    def read_files(self, files: list[tuple[Path, Path]], chunker: Chunker, before: Before, gathered: Gathered,
                   report: IngestReport, max_bytes: int | None, max_text: tuple[float, float] | None,
                   progress: Progress | None) -> None: ...

    def analyse(self, texts: Iterable[str], analyzer: Analyzer) -> Iterator[list[str]]: ...

    def embed(self, index: Index, building: Building) -> dict[str, int]: ...


class InProcess:
    """Every step in this process (the one-machine ingest)."""

    def read_files(self, files: list[tuple[Path, Path]], chunker: Chunker, before: Before, gathered: Gathered,
                   report: IngestReport, max_bytes: int | None, max_text: tuple[float, float] | None,
                   progress: Progress | None) -> None:
        read_files(files, chunker, before, gathered, report, max_bytes, max_text, progress)

    def analyse(self, texts: Iterable[str], analyzer: Analyzer) -> Iterator[list[str]]:
        return (analyzer(t) for t in texts)

    def embed(self, index: Index, building: Building) -> dict[str, int]:
        return {}  # the retrievers' build hooks embed what the cache lacks


HERE = InProcess()
