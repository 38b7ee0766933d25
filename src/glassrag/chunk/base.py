"""What chunkers share: parameters, locating a span in its document, and making chunks."""

from __future__ import annotations

from typing import Any, ClassVar

from glassrag.chunk.units import UNITS, count_units, unit_spans
from glassrag.errors import ConfigError
from glassrag.schema import Chunk, Document


class Chunker:
    """A chunker cuts a Document into Chunks whose text is `doc.text[start:end]`.

    `size` and `overlap` count `unit`s (words, tokens or characters).
    """

    name: ClassVar[str] = ""

    def __init__(self, size: int = 200, overlap: int = 0, unit: str = "words") -> None:
        if unit not in UNITS:
            raise ConfigError(f"unknown chunk unit {unit!r}", f"choose one of: {', '.join(UNITS)}")
        if size < 1:
            raise ConfigError(f"chunk size must be at least 1, got {size}")
        if not 0 <= overlap < size:
            raise ConfigError(f"chunk overlap must be in [0, size) = [0, {size}), got {overlap}",
                              "use a smaller --overlap than --size")
        self.size = size
        self.overlap = overlap
        self.unit = unit

    def params(self) -> dict[str, Any]:
        return {"chunker": self.name, "size": self.size, "overlap": self.overlap, "unit": self.unit}

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        raise NotImplementedError

    def chunk(self, doc: Document) -> list[Chunk]:
        chunks = []
        for position, (start, end) in enumerate(self.spans(doc)):
            locator, path = locate(doc, start, end)
            chunks.append(Chunk.make(doc.id, locator, doc.text[start:end], start, end,
                                     position, path))
        return chunks

    # helpers shared by the variants -------------------------------------------------

    def windows(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """Fixed windows of `size` units with `overlap` over text[start:end]."""
        units = unit_spans(text[start:end], self.unit) + start
        n = len(units)
        if n == 0:
            return []
        step = self.size - self.overlap
        out = []
        first = 0
        while True:
            last = min(first + self.size, n) - 1
            a, b = int(units[first, 0]), int(units[last, 1])
            piece = text[a:b]  # character windows may start or end on white space
            a, b = a + len(piece) - len(piece.lstrip()), a + len(piece.rstrip())
            if b > a:
                out.append((a, b))
            if last == n - 1:
                return out
            first += step

    def pack(self, text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Greedily join consecutive pieces (sentences, paragraphs) up to `size` units,
        carrying trailing pieces of at most `overlap` units into the next chunk; a piece
        longer than `size` is cut into fixed windows."""
        sizes = [count_units(text[a:b], self.unit) for a, b in pieces]
        out: list[tuple[int, int]] = []
        current: list[int] = []
        total = 0
        for i, n in enumerate(sizes):
            if n > self.size:
                if current:
                    out.append((pieces[current[0]][0], pieces[current[-1]][1]))
                    current, total = [], 0
                out.extend(self.windows(text, *pieces[i]))
                continue
            if current and total + n > self.size:
                out.append((pieces[current[0]][0], pieces[current[-1]][1]))
                carried: list[int] = []
                kept = 0
                for j in reversed(current):
                    if kept + sizes[j] > self.overlap or kept + sizes[j] + n > self.size:
                        break
                    carried.insert(0, j)
                    kept += sizes[j]
                current, total = carried, kept
            current.append(i)
            total += n
        if current:
            out.append((pieces[current[0]][0], pieces[current[-1]][1]))
        return out


def locate(doc: Document, start: int, end: int) -> tuple[str, tuple[str, ...]]:
    """The locator of the section holding most of [start, end); for plain text, line numbers."""
    if doc.format == "text":
        first = doc.text.count("\n", 0, start) + 1
        last = doc.text.count("\n", 0, max(start, end - 1)) + 1
        return (f"line {first}" if first == last else f"lines {first}-{last}"), ()
    best, best_overlap = None, 0
    for section in doc.sections:
        overlap = min(end, section.end) - max(start, section.start)
        if overlap > best_overlap:
            best, best_overlap = section, overlap
    if best is None:
        return "", ()
    return best.locator, best.heading_path
