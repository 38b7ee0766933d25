"""The excerpt window: at most `width` characters of a passage, opening at the sentence
that carries most of the question's words rather than at the chunk's start.

A passage that fits in `width` is shown whole. Otherwise the window starts at that
sentence and runs to the last sentence (or, failing that, word) boundary that fits;
when the sentence sits near the end, the window opens earlier so it is still full.
"""

from __future__ import annotations

import functools
import re
from typing import Callable

from glassrag.chunk.units import sentence_spans


@functools.lru_cache(maxsize=4096)
def sentences(text: str, analyze: Callable[[str], list[str]]) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """The sentences of a passage with their terms, kept for the next question that shows or
    reads it (the analyzer is part of the key)."""
    return tuple((a, b, frozenset(analyze(text[a:b]))) for a, b in sentence_spans(text))


def coverage(question_terms: set[str], sentence_terms: list[str]) -> float:
    """|question terms ∩ sentence terms| / |question terms| (0 for an empty question)."""
    if not question_terms:
        return 0.0
    return len(question_terms & set(sentence_terms)) / len(question_terms)


def best_sentence(text: str, question_terms: set[str],
                  analyze: Callable[[str], list[str]]) -> tuple[int, int, float]:
    """(start, end, coverage) of the sentence with the highest coverage; the first wins ties."""
    best = (0, len(text), -1.0)
    n = len(question_terms)
    for a, b, terms in sentences(text, analyze):
        c = len(question_terms & terms) / n if n else 0.0  # coverage(question_terms, terms)
        if c > best[2]:
            best = (a, b, c)
    return best if best[2] >= 0 else (0, len(text), 0.0)


def window(text: str, anchor: int, width: int = 720) -> tuple[int, int]:
    """[start, end) of at most `width` characters that begins at `anchor` when it can."""
    if len(text) <= width:
        return 0, len(text)
    start = min(anchor, max(0, len(text) - width))
    if start < anchor:  # opened earlier to stay full: begin at a word
        gap = re.search(r"\s", text[start:anchor])
        start = start + gap.end() if gap else anchor
    end = min(len(text), start + width)
    if end < len(text):
        cut = max(text.rfind(". ", start, end), text.rfind("\n", start, end))
        if cut > start + width // 2:
            end = cut + 1
        else:
            gaps = [m.start() for m in re.finditer(r"\s", text[start:end])]
            end = start + gaps[-1] if gaps else end
    return start, end
