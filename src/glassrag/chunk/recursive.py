"""Recursive splitting: sections, then paragraphs, then sentences, then fixed windows,
descending only where a piece is longer than `size`, and packing small neighbours
back together up to `size` at each level."""

from __future__ import annotations

from glassrag.chunk.base import Chunker, trimmed
from glassrag.chunk.units import count_units, paragraph_spans, sentence_spans
from glassrag.schema import Document


class RecursiveChunker(Chunker):
    name = "recursive"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        text = doc.text
        out: list[tuple[int, int]] = []
        for s in doc.sections:
            start, end = trimmed(text, s.start, s.end)
            if start == end:
                continue
            if count_units(text[start:end], self.unit) <= self.size:
                out.append((start, end))
                continue
            pieces: list[tuple[int, int]] = []
            for a, b in paragraph_spans(text, start, end):
                if count_units(text[a:b], self.unit) <= self.size:
                    pieces.append((a, b))
                else:
                    pieces.extend(sentence_spans(text, a, b))
            out.extend(self.pack(text, pieces))
        return out
