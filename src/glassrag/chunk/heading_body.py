"""The heading chunker without heading-only chunks: a section that holds nothing but its heading
(`## Tools` straight above `### Install`) joins the chunk after it, when together they fit
`size`. Alone, such a chunk is a few words that rank first on a question naming them and answer
nothing (issue 49, item 8: a "Tools" chunk above its list). Otherwise as `heading`, so a chunk
crosses a section only where a bare heading opens it."""

from __future__ import annotations

from glassrag.chunk.base import trimmed
from glassrag.chunk.heading import HeadingChunker
from glassrag.chunk.units import count_units
from glassrag.schema import Document


class HeadingBodyChunker(HeadingChunker):
    name = "heading-body"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        bare = {span for s in doc.sections if s.heading_path
                for span in [trimmed(doc.text, s.start, s.end)] if doc.text[span[0]:span[1]] == s.heading_path[-1]}
        out: list[tuple[int, int]] = []
        pending: tuple[int, int] | None = None  # bare headings waiting for the chunk after them
        for span in super().spans(doc):
            alone = span in bare
            if pending is not None:
                joined = (pending[0], span[1])
                if self._fits(doc.text, joined):
                    span = joined
                else:
                    out.append(pending)
                pending = None
            if alone:
                pending = span
            else:
                out.append(span)
        if pending is not None:
            out.append(pending)
        return out

    def _fits(self, text: str, span: tuple[int, int]) -> bool:
        """Whether a span is at most `size` units, measured as `pack` measures a chunk."""
        if self.unit == "chars":
            return span[1] - span[0] <= self.size
        return count_units(text[span[0]:span[1]], self.unit) <= self.size
