"""The whole document as one chunk (BEIR convention: a passage corpus is already cut)."""

from __future__ import annotations

from glassrag.chunk.base import Chunker
from glassrag.schema import Document


class DocumentChunker(Chunker):
    name = "document"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        text = doc.text
        start = len(text) - len(text.lstrip())
        end = len(text.rstrip())
        return [(start, end)] if end > start else []
