"""Highlighting the words that answer: in the sentence that carries most of the
question's words, the content words the question does not already contain; never a
section number that opens a line ("5.3 Battery care"), and for a question that asks for a
quantity (how long, how many, how much, when, what time, what price) only the runs that
hold a number ("about 4 minutes" marks "4 minutes", not every other word).

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
_ASKS_FOR_QUANTITY = re.compile(
    r"\b(how (long|many|much|often|far|soon|old|big|heavy)|when|what time|what (price|cost|date|year)"
    r"|how quickly|what percentage)\b", re.IGNORECASE)
_SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)+\.?")


def asks_for_a_name(question: str) -> bool:
    return bool(_ASKS_FOR_NAME.search(question))


def asks_for_a_quantity(question: str) -> bool:
    return bool(_ASKS_FOR_QUANTITY.search(question))


def answer_words(text: str, start: int, end: int, question_terms: set[str],
                 analyze: Callable[[str], list[str]], question: str = "") -> list[tuple[int, int]]:
    """Spans (absolute offsets in `text`) of the content words of text[start:end] that
    are not question terms; runs of adjacent highlighted words are merged. A section number
    at the start of a line is skipped; when `question` asks for a quantity and a run holds a
    digit, only the runs with digits are kept, each from its first word with a digit."""
    spans: list[tuple[int, int]] = []
    for m in _WORD.finditer(text, start, end):
        if _SECTION_NUMBER.fullmatch(m.group()) and not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip():
            continue
        terms = analyze(m.group())
        if terms and not (set(terms) & question_terms):
            a, b = m.span()
            if spans and text[spans[-1][1]:a].strip() == "":
                spans[-1] = (spans[-1][0], b)
            else:
                spans.append((a, b))
    if question and asks_for_a_quantity(question):
        # each run with a number, from its first word with a digit: "needs about 4 minutes" -> "4 minutes"
        numeric = [(a + re.search(r"\S*\d", text[a:b]).start(), b)  # type: ignore[union-attr]
                   for a, b in spans if any(ch.isdigit() for ch in text[a:b])]
        return numeric or spans
    return spans
