"""One chunk per section (heading, page, slide, sheet); a section longer than `size`
is split further by sentence packing inside it, so no chunk crosses a section."""

from __future__ import annotations

from glassrag.chunk.base import Chunker, trimmed
from glassrag.chunk.units import count_units, sentence_spans
from glassrag.schema import Document


class HeadingChunker(Chunker):
    name = "heading"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for s in doc.sections:
            start, end = trimmed(doc.text, s.start, s.end)
            if start == end:
                continue
            if count_units(doc.text[start:end], self.unit) <= self.size:
                out.append((start, end))
            else:
                out.extend(self.pack(doc.text, sentence_spans(doc.text, start, end)))
        return out
