"""Highlighting the words that answer: one short run of words in the shown excerpt, not
every word the question lacks (issue 27, item 8).

The rule, over the excerpt's words, each of them a question word (its terms meet the
question's), a stopword (no terms) or a new word:

1. **Runs.** A run is a stretch of new words, with the stopwords between them; a question
   word or clause punctuation (`, ; : | ( )`, a line break, a sentence's end) ends it. A
   section number that opens a line ("5.3 Battery care") is never part of one.
2. **Units.** Each run belongs to a unit: a row of a table, a whole block of `key: value`
   lines (a record of a sheet, with no sentence end in it), else a sentence.
3. **The run that answers** is the one
   (a) holding a number (4, 1.2, 14,200, 08:00; an identifier such as E-4107 or 720-0055
       is a name), when the question asks for a figure (how long, how many, what cost, what
       limit, ...: `asks_for_a_figure`);
   (b) in a unit that holds a question word;
   (c) in the unit that holds most of the question's terms;
   (d) nearest a question word of its unit, counted in words;
   (e) after rather than before it (given before new: an answer sentence repeats what was
       asked, then adds the answer);
   and the first in the text on a tie.
4. **At most `MAX_WORDS` words** of it are marked, those nearest the question's words; a
   figure's run is marked from its first number ("needs about 4 minutes" marks "4 minutes").

Measured on the demo's golden set (bench/highlight.py: first passage, gate off, answerable
questions whose excerpt shows a labelled answer string): the bold overlapped the answer for
32.1 % of test questions (28) with the old rule (every new word of the best sentence) and
53.6 % with this one; for those not asking for a quantity (15) 26.7 % -> 40.0 %, and the
share of bold characters inside the answer 4.3 % -> 35.6 %. Two variants chosen on the train
split (number words as figures; identifiers as figures for part-number questions) moved
one to three questions either way and were left out.

A question that asks what something is called gets no highlight: the name it wants
shares nothing with the question, so overlap cannot find it, and bolding the other
words would point at the wrong thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from glassrag.chunk.units import sentence_spans


_ASKS_FOR_NAME = re.compile(
    r"\b(called|name (for|of)|what('s| is) the (term|name)|term for|what do (we|you|they) call|known as)\b",
    re.IGNORECASE)
_WORD = re.compile(r"\w+(?:[-./,]\d+)*(?:[-./]\w+)*")
_ASKS_FOR_QUANTITY = re.compile(
    r"\b(how (long|many|much|often|far|soon|old|big|heavy)|when|what time|what (price|cost|date|year)"
    r"|how quickly|what percentage)\b", re.IGNORECASE)
# a question about one of these asks for a figure even without "how much"
_FIGURE_NOUNS = re.compile(
    r"\b(cost|costs|price|fee|limit|capacity|speed|range|allowance|rate|part number|version|firmware|"
    r"spacing|mileage|distance|weight|size|hours|percent(age)?|heaviest|maximum|minimum)\b", re.IGNORECASE)
_SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)+\.?")
_SENTENCE_END = re.compile(r"[.!?](\s|$)")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")  # 4, 1.2, 14,200, 08:00: not E-4107 or 720-0055, which are names
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CLAUSE = re.compile(r"[,;:|()\n]|[.!?](\s|$)")
MAX_WORDS = 6
# questions whose kind (asks for a name, a quantity, a figure) is kept: each passage of an answer
# asks again, and a 4,000-character question takes a few milliseconds to search (issue 30)
QUESTIONS_KEPT = 256
# windows of chunk text whose words are kept with their terms (the part of the rule that does not
# depend on the question; half the highlighter's time, issue 30)
WINDOWS_KEPT = 4096


@lru_cache(maxsize=QUESTIONS_KEPT)
def asks_for_a_name(question: str) -> bool:
    return bool(_ASKS_FOR_NAME.search(question))


@lru_cache(maxsize=QUESTIONS_KEPT)
def asks_for_a_quantity(question: str) -> bool:
    return bool(_ASKS_FOR_QUANTITY.search(question))


@lru_cache(maxsize=QUESTIONS_KEPT)
def asks_for_a_figure(question: str) -> bool:
    """A quantity, or a thing whose answer is a figure (a cost, a limit, a version)."""
    return asks_for_a_quantity(question) or bool(_FIGURE_NOUNS.search(question))


@dataclass(frozen=True)
class _Word:
    start: int
    end: int
    kind: str  # "q" (a question word), "s" (a stopword), "n" (a new word)
    unit: int


@dataclass
class _Run:
    words: list[_Word]
    gap: float  # words to the nearest question word of its unit (inf: the unit has none)
    after: bool  # a question word comes before it in its unit, nearer than any after it
    cover: int  # question terms its unit holds

    def figure(self, text: str) -> bool:
        """It holds a number (an identifier such as E-4107 or 720-0055 is a name, not a figure)."""
        return any(_NUMBER.fullmatch(text[w.start:w.end]) for w in self.words)


def _units(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The stretches of text[start:end] whose question words a run is measured against: each
    row of a table, a whole block of `key: value` lines (a record of a sheet: no sentence ends
    in it), else each sentence of a block of prose. Blocks are separated by blank lines."""
    cuts = [start, *(m.end() for m in _BLANK_LINE.finditer(text, start, end)), end]
    units: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:]):
        block = text[a:b]
        if not block.strip():
            continue
        lines = [m for m in re.finditer(r"[^\n]+", block) if m.group().strip()]
        if all(m.group().lstrip().startswith("|") for m in lines):
            units += [(a + m.start(), a + m.end()) for m in lines]
        elif not _SENTENCE_END.search(block):
            units.append((a, b))
        else:
            units += sentence_spans(text, a, b)
    return units


@lru_cache(maxsize=WINDOWS_KEPT)
def _segmented(text: str, start: int, end: int,
               analyze: Callable[[str], list[str]]) -> tuple[tuple[tuple[int, int, frozenset[str] | None], ...], ...]:
    """The words of text[start:end] by unit, each with its terms (None: a section number, which
    counts as a stopword): the same for every question, so worked out once per window shown."""
    units = []
    for a, b in _units(text, start, end):
        words: list[tuple[int, int, frozenset[str] | None]] = []
        for m in _WORD.finditer(text, a, b):
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if _SECTION_NUMBER.fullmatch(m.group()) and not line.strip():
                words.append((m.start(), m.end(), None))
            else:
                words.append((m.start(), m.end(), frozenset(analyze(m.group()))))
        units.append(tuple(words))
    return tuple(units)


def _words(text: str, start: int, end: int, question_terms: set[str],
           analyze: Callable[[str], list[str]]) -> tuple[list[_Word], list[int]]:
    """The words of text[start:end] with their kinds and units, and each unit's count
    of question terms."""
    words: list[_Word] = []
    cover = []
    for s, unit in enumerate(_segmented(text, start, end, analyze)):
        held: set[str] = set()
        for a, b, terms in unit:
            if terms is None:
                words.append(_Word(a, b, "s", s))
                continue
            asked = terms & question_terms
            kind = "q" if asked else "n" if terms else "s"
            held |= asked
            words.append(_Word(a, b, kind, s))
        cover.append(len(held))
    return words, cover


def _runs(text: str, words: list[_Word], cover: list[int]) -> list[_Run]:
    spans: list[list[int]] = []  # each run as the positions of its words in `words`
    current: list[int] = []
    for i, w in enumerate(words):
        prev = words[i - 1] if i else None
        broken = prev is None or prev.unit != w.unit or bool(_CLAUSE.search(text[prev.end:w.start]))
        if w.kind == "q" or broken:
            if current:
                spans.append(current)
            current = []
        if w.kind == "n" or (w.kind == "s" and current):
            current.append(i)
    if current:
        spans.append(current)
    asked: dict[int, list[int]] = {}  # unit -> positions of its question words
    for i, w in enumerate(words):
        if w.kind == "q":
            asked.setdefault(w.unit, []).append(i)
    out = []
    for span in spans:
        while span and words[span[-1]].kind == "s":  # stopwords only between new words
            span = span[:-1]
        if not span:
            continue
        first, last, unit = span[0], span[-1], words[span[0]].unit
        before = [first - i for i in asked.get(unit, []) if i < first]
        after = [i - last for i in asked.get(unit, []) if i > last]
        gap = min(before + after, default=float("inf"))
        out.append(_Run([words[i] for i in span], gap,
                        bool(before) and min(before) <= min(after, default=float("inf")), cover[unit]))
    return out


def answer_words(text: str, start: int, end: int, question_terms: set[str],
                 analyze: Callable[[str], list[str]], question: str = "") -> list[tuple[int, int]]:
    """The span (absolute offsets in `text`) of the run of text[start:end] that answers, by
    the rule above; no span when there is no new word."""
    words, cover = _words(text, start, end, question_terms, analyze)
    runs = _runs(text, words, cover)
    if not runs:
        return []
    figure = bool(question) and asks_for_a_figure(question)
    best = max(runs, key=lambda r: (figure and r.figure(text), r.gap < float("inf"), r.cover, -r.gap, r.after,
                                    -r.words[0].start))
    chosen = list(best.words)
    if figure and best.figure(text):
        first = next(i for i, w in enumerate(chosen) if _NUMBER.fullmatch(text[w.start:w.end]))
        chosen = chosen[first:]
    # at most MAX_WORDS words, those nearest the question's words
    chosen = chosen[:MAX_WORDS] if best.after or best.gap == float("inf") else chosen[-MAX_WORDS:]
    while chosen and chosen[0].kind == "s":
        chosen = chosen[1:]
    while chosen and chosen[-1].kind == "s":
        chosen = chosen[:-1]
    return [(chosen[0].start, chosen[-1].end)] if chosen else []
