"""Diversity cap: at most M passages per document in the list passed on, so one long
document cannot fill every slot (it trades hit rate for source recall)."""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ListStage, keeps_scores
from glassrag.store.base import ChunkDocs


def made(index: Any, config: Any, bm25: Any) -> DocumentCap | None:
    """The cap `cap.per_document` asks for; none at 0."""
    return DocumentCap(ChunkDocs(index), config.cap.per_document) if config.cap.per_document > 0 else None


class DocumentCap(ListStage):
    name = "cap"
    kind = Kind.CAP

    def __init__(self, chunk_doc: Mapping[str, str], per_document: int = 2) -> None:
        self.chunk_doc = chunk_doc
        self.per_document = per_document

    def params(self) -> dict[str, Any]:
        return {"per_document": self.per_document}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        seen: dict[str, int] = {}
        kept: list[Hit] = []
        removed = 0
        for h in hits:
            doc = self.chunk_doc[h.chunk_id]
            if seen.get(doc, 0) >= self.per_document:
                removed += 1
                continue
            seen[doc] = seen.get(doc, 0) + 1
            kept.append(Hit(h.chunk_id, h.score, len(kept) + 1, self.name, h.detail))
        notes = [f"removed {removed} chunk(s) beyond {self.per_document} per document"] if removed else []
        return kept, notes


CAPS = {"cap": Entry(made, keeps_scores("at most M passages of each document kept"), term="cap")}
