"""Fixed-size chunks: windows of `size` units every `size - overlap` units, across the
whole document, blind to its structure (the baseline every other chunker is measured against)."""

from __future__ import annotations

from glassrag.chunk.base import Chunker
from glassrag.schema import Document


class FixedChunker(Chunker):
    name = "fixed"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        return self.windows(doc.text, 0, len(doc.text))
