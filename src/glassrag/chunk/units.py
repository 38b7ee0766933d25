"""Counting units (words, tokens, characters) and sentences, each with its character span,
so every chunk can be cut back out of the document verbatim."""

from __future__ import annotations

import re

import numpy as np

UNITS = ("words", "tokens", "chars")
_WORD = re.compile(r"\S+")
# "tokens" approximates a model tokenizer: each word and each punctuation mark counts.
_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\|)")


def unit_spans(text: str, unit: str) -> np.ndarray:
    """An (n, 2) array of [start, end) offsets of each unit in `text`."""
    if unit == "chars":
        starts = np.arange(len(text), dtype=np.int64)
        return np.stack([starts, starts + 1], axis=1)
    pattern = {"words": _WORD, "tokens": _TOKEN}.get(unit)
    if pattern is None:
        from glassrag.errors import UnknownNameError

        raise UnknownNameError("unit", unit, list(UNITS))
    spans = [m.span() for m in pattern.finditer(text)]
    return np.asarray(spans, dtype=np.int64).reshape(-1, 2)


def count_units(text: str, unit: str) -> int:
    if unit == "chars":
        return len(text)
    return len(unit_spans(text, unit))


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of `text[start:end]` as absolute [start, end) spans, whitespace trimmed.

    A sentence ends at `.`, `!` or `?` followed by space, and at a line break unless the
    next line continues a hard-wrapped sentence (it starts in lower case and is not a
    list item or table row). Blank lines always end one.
    """
    end = len(text) if end is None else end
    cuts = [start]
    pos = start
    for line in text[start:end].splitlines(keepends=True):
        line_end = pos + len(line)
        body = line.rstrip("\n")
        for m in _SENTENCE_END.finditer(body):
            if m.end() < len(body):
                cuts.append(pos + m.end())
        nxt = text[line_end:end].split("\n", 1)[0]
        wrapped = (
            body.strip()
            and nxt.strip()
            and nxt.lstrip()[:1].islower()
            and not _BLOCK_START.match(nxt)
            and not _BLOCK_START.match(body)
        )
        if not wrapped:
            cuts.append(line_end)
        pos = line_end
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
