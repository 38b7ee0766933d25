"""Counting units (words, tokens, characters) and sentences, each with its character span,
so every chunk can be cut back out of the document verbatim."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # numpy is imported where spans are made: `ingest --help` lists UNITS without it
    import numpy as np

UNITS = ("words", "tokens", "chars")
_WORD = re.compile(r"\S+")
# "tokens" approximates a model tokenizer: each word and each punctuation mark counts.
_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
# a list item or table row, matched at a position (`^` would not anchor there)
_BLOCK_AT = re.compile(r"\s*(?:[-*+]\s|\d+[.)]\s|\|)")
_VISIBLE = re.compile(r"\S")
# where str.splitlines cuts
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def unit_spans(text: str, unit: str) -> np.ndarray:
    """An (n, 2) array of [start, end) offsets of each unit in `text` (16 bytes a unit,
    built without an intermediate list of Python tuples)."""
    import numpy as np

    if unit == "chars":
        starts = np.arange(len(text), dtype=np.int64)
        return np.stack([starts, starts + 1], axis=1)
    pattern = {"words": _WORD, "tokens": _TOKEN}.get(unit)
    if pattern is None:
        from glassrag.errors import UnknownNameError

        raise UnknownNameError("unit", unit, list(UNITS))
    flat = np.fromiter((x for m in pattern.finditer(text) for x in m.span()), dtype=np.int64)
    return flat.reshape(-1, 2)


def count_units(text: str, unit: str) -> int:
    if unit == "chars":
        return len(text)
    if unit not in ("words", "tokens"):
        from glassrag.errors import UnknownNameError

        raise UnknownNameError("unit", unit, list(UNITS))
    # subn counts the matches in C and keeps only what lies between them (the white space)
    return (_WORD if unit == "words" else _TOKEN).subn("", text)[1]


def _line_spans(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """[start, end) of each line of text[start:end], line break included, where
    `str.splitlines` would cut, without copying the text."""
    pos = start
    for m in _LINE_BREAK.finditer(text, start, end):
        yield pos, m.end()
        pos = m.end()
    if pos < end:
        yield pos, end


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of `text[start:end]` as absolute [start, end) spans, whitespace trimmed.

    A sentence ends at `.`, `!` or `?` followed by space, and at a line break unless the
    next line continues a hard-wrapped sentence (it starts in lower case and is not a
    list item or table row). Blank lines always end one.

    Linear in the length: the next line's first visible character and the next newline
    are found by searches that never scan the same stretch twice.
    """
    end = len(text) if end is None else end
    cuts = [start]
    next_newline = next_visible = start - 1  # positions found by earlier searches
    for pos, line_end in _line_spans(text, start, end):
        body_end = line_end - 1 if text[line_end - 1] == "\n" else line_end
        for m in _SENTENCE_END.finditer(text, pos, body_end):
            if m.end() < body_end:
                cuts.append(m.end())
        wrapped = False
        if _VISIBLE.search(text, pos, body_end):
            if next_newline < line_end:
                found = text.find("\n", line_end, end)
                next_newline = end if found < 0 else found
            if next_visible < line_end:
                m = _VISIBLE.search(text, line_end, end)
                next_visible = end if m is None else m.start()
            # the next line (up to the next \n) has visible text that starts in lower case
            wrapped = (next_visible < next_newline and text[next_visible].islower()
                       and not _BLOCK_AT.match(text, next_visible, next_newline)
                       and not _BLOCK_AT.match(text, pos, body_end))
        if not wrapped:
            cuts.append(line_end)
    cuts.append(end)
    spans: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:]):
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            spans.append((a + lead, a + trail))
    return spans


def paragraph_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Blocks of `text[start:end]` separated by blank lines, as absolute trimmed spans."""
    spans = []
    for m in re.finditer(r"(?:[^\n]|\n(?!\s*\n))+", text[start:end]):
        a, b = m.span()
        piece = m.group()
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            spans.append((start + a + lead, start + a + trail))
    return spans
