"""What an ingest did, file by file, and the progress callback it reports to: the indexer
fills the report, and so do the retrievers' build hooks (an embedder's counts and warnings)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from glassrag.errors import IngestError

Progress = Callable[[str, int, int], None]  # what is being done, done, total


@dataclass
class IngestReport:
    """What an ingest did, file by file."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[IngestError] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    embedded: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> counts
    quality: dict[str, dict] = field(default_factory=dict)  # doc id -> extraction-quality check
    nothing_changed: bool = False  # the previous index is returned as it was: nothing to write
    unchanged_sources: dict[str, int] = field(default_factory=dict)  # BEIR corpus file -> documents

    def n_unchanged(self) -> int:
        return len(self.unchanged) + sum(self.unchanged_sources.values())
