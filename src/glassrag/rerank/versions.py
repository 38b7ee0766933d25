"""Preferring current versions: a chunk of a document that another document supersedes
is demoted below every current chunk, or dropped, when its successor is indexed.

Which document supersedes which is read from the documents' metadata
(glassrag/ingest/versions.py); a stored index keeps the result.
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.errors import ConfigError
from glassrag.ingest.versions import superseded
from glassrag.query import Query
from glassrag.schema import Document, Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ListStage, keeps_scores
from glassrag.store.base import ChunkDocs

MODES = ("off", "demote", "drop")


def made(index: Any, config: Any, bm25: Any) -> PreferCurrent | None:
    """The stage `versions.mode` asks for; none when it is off or no document is superseded."""
    mode = config.versions.mode
    if mode not in MODES:
        raise ConfigError(f"unknown versions.mode {mode!r}", f"choose one of: {', '.join(MODES)}")
    superseded = index.superseded() if mode != "off" else None
    if not superseded:  # only where versions exist
        return None
    return PreferCurrent(None, ChunkDocs(index), mode, superseded)


class PreferCurrent(ListStage):
    name = "versions"
    kind = Kind.VERSIONS

    def __init__(self, documents: Mapping[str, Document] | None, chunk_doc: Mapping[str, str],
                 mode: str = "demote", old: Mapping[str, str] | None = None) -> None:
        """`old` is `superseded(documents)` when the caller has it already (a stored index
        keeps it), so the documents are not read again."""
        self.mode = mode
        self.old = dict(old) if old is not None else superseded(documents or {})
        self.chunk_doc = chunk_doc

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode, "superseded": dict(self.old)}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        old = [self.chunk_doc[h.chunk_id] in self.old for h in hits]  # one lookup a hit
        current = [h for h, o in zip(hits, old) if not o]
        stale = [h for h, o in zip(hits, old) if o]
        if not stale:
            return hits, []
        docs = sorted({self.chunk_doc[h.chunk_id] for h in stale})
        why = ", ".join(f"{d} is superseded by {self.old[d]}" for d in docs)
        if self.mode == "drop":
            kept = current
            note = f"dropped {len(stale)} chunk(s): {why}"
        else:
            kept = current + stale
            note = f"demoted {len(stale)} chunk(s) below the current versions: {why}"
        return [Hit(h.chunk_id, h.score, r, self.name, h.detail) for r, h in enumerate(kept, 1)], [note]


VERSIONS = {"versions": Entry(made, keeps_scores("current versions first, superseded ones demoted or dropped"))}
