"""Highlighting the words that answer: in the sentence that carries most of the
question's words, the content words the question does not already contain.

A question that asks what something is called gets no highlight: the name it wants
shares nothing with the question, so overlap cannot find it, and bolding the other
words would point at the wrong thing.
"""

from __future__ import annotations

import re
from typing import Callable

_ASKS_FOR_NAME = re.compile(
    r"\b(called|name (for|of)|what('s| is) the (term|name)|term for|what do (we|you|they) call|known as)\b",
    re.IGNORECASE)
_WORD = re.compile(r"\w+(?:[-./]\w+)*")


def asks_for_a_name(question: str) -> bool:
    return bool(_ASKS_FOR_NAME.search(question))


def answer_words(text: str, start: int, end: int, question_terms: set[str],
                 analyze: Callable[[str], list[str]]) -> list[tuple[int, int]]:
    """Spans (absolute offsets in `text`) of the content words of text[start:end] that
    are not question terms; runs of adjacent highlighted words are merged."""
    spans: list[tuple[int, int]] = []
    for m in _WORD.finditer(text, start, end):
        terms = analyze(m.group())
        if terms and not (set(terms) & question_terms):
            a, b = m.span()
            if spans and text[spans[-1][1]:a].strip() == "":
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
    return spans
