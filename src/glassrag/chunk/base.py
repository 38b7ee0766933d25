"""What chunkers share: parameters, locating a span in its document, and making chunks."""

from __future__ import annotations

import bisect
import itertools
import re
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
        where = Locator(doc)
        for position, (start, end) in enumerate(self.spans(doc)):
            locator, path = where.at(start, end)
            chunks.append(Chunk.make(doc.id, locator, doc.text[start:end], start, end,
                                     position, path))
        return chunks

    # helpers shared by the variants -------------------------------------------------

    def windows(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """Fixed windows of `size` units with `overlap` over text[start:end]."""
        if self.unit == "chars":
            return self._char_windows(text, start, end)
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

    def _char_windows(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """`windows` for characters, by arithmetic: no array of one span per character."""
        out = []
        step = self.size - self.overlap
        first = start
        while first < end:
            a, b = first, min(first + self.size, end)
            piece = text[a:b]  # character windows may start or end on white space
            a, b = a + len(piece) - len(piece.lstrip()), a + len(piece.rstrip())
            if b > a:
                out.append((a, b))
            if first + self.size >= end:
                return out
            first += step
        return out

    def pack(self, text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Greedily join consecutive pieces (sentences, paragraphs) up to `size` units,
        carrying trailing pieces of at most `overlap` units into the next chunk; a piece
        longer than `size` is cut into fixed windows.

        A chunk's size is measured as it will be cut: with `unit = chars` the white space
        that joins its pieces counts too, so no chunk is longer than `size` characters."""
        sizes = [count_units(text[a:b], self.unit) for a, b in pieces]
        before = list(itertools.accumulate(sizes, initial=0))  # units before piece i

        def measure(first: int, last: int) -> int:
            """Units of the chunk that runs from piece `first` to piece `last`."""
            if self.unit == "chars":
                return pieces[last][1] - pieces[first][0]
            return before[last + 1] - before[first]

        out: list[tuple[int, int]] = []
        current: list[int] = []  # consecutive pieces of the open chunk
        for i, n in enumerate(sizes):
            if n > self.size:
                if current:
                    out.append((pieces[current[0]][0], pieces[current[-1]][1]))
                    current = []
                out.extend(self.windows(text, *pieces[i]))
                continue
            if current and measure(current[0], i) > self.size:
                out.append((pieces[current[0]][0], pieces[current[-1]][1]))
                carried: list[int] = []
                for j in reversed(current):
                    if measure(j, current[-1]) > self.overlap or measure(j, i) > self.size:
                        break
                    carried.insert(0, j)
                current = carried
            current.append(i)
        if current:
            out.append((pieces[current[0]][0], pieces[current[-1]][1]))
        return out


def trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) without the white space at either end (empty: start == end)."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip())
    return (start + lead, start + max(lead, len(piece.rstrip())))


class Locator:
    """Finds chunk locators in one document in O(log n) each: line numbers of plain text
    from the offsets of its line breaks, sections by binary search over their starts."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.newlines: list[int] | None = None
        if doc.format == "text":
            self.newlines = [m.start() for m in re.finditer("\n", doc.text)]
            return
        self.order = sorted(range(len(doc.sections)), key=lambda i: doc.sections[i].start)
        self.starts = [doc.sections[i].start for i in self.order]
        self.reach = list(itertools.accumulate((doc.sections[i].end for i in self.order), max))

    def at(self, start: int, end: int) -> tuple[str, tuple[str, ...]]:
        """The locator of the section holding most of [start, end) (the first listed of
        equals); for plain text, line numbers."""
        if self.newlines is not None:
            first = bisect.bisect_left(self.newlines, start) + 1
            last = bisect.bisect_left(self.newlines, max(start, end - 1)) + 1
            return (f"line {first}" if first == last else f"lines {first}-{last}"), ()
        sections = self.doc.sections
        best: tuple[int, int] | None = None  # (overlap, -index in doc.sections)
        i = bisect.bisect_left(self.starts, end) - 1  # sections starting before `end`
        while i >= 0 and self.reach[i] > start:  # stop when none of the earlier ones reach `start`
            s = sections[self.order[i]]
            overlap = min(end, s.end) - max(start, s.start)
            if overlap > 0 and (best is None or (overlap, -self.order[i]) > best):
                best = (overlap, -self.order[i])
            i -= 1
        if best is None:
            return "", ()
        found = sections[-best[1]]
        return found.locator, found.heading_path


def locate(doc: Document, start: int, end: int) -> tuple[str, tuple[str, ...]]:
    """The locator of the section holding most of [start, end); for plain text, line numbers.
    (One call; `Locator` answers many for the same document.)"""
    return Locator(doc).at(start, end)
