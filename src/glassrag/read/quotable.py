"""What the extractive reader may quote: whole sentences of prose.

`sentence_spans` cuts at every line break that is not followed by a lower-case line, which
suits excerpts; a quote needs more (issue 27: "… is not enabled by default, because", a code
fence, a table header row). Here, over those spans:

- code is never quoted: lines inside a ``` or ~~~ fence, the fence lines themselves, and
  lines indented by four spaces or a tab after a blank line;
- a table's header row (a `|` row followed by a `|---|` separator) and the separator are
  never quoted; its data rows are (answers live in tables);
- a sentence that ends a line without closing punctuation (`.` `!` `?` `:` `;` or a closing
  quote or bracket after one) is joined with the next line's sentence when that line is
  prose too (not a list item, table row, heading or code) and the first line is long enough
  to have been wrapped (MIN_WRAPPED) and opens with no section number: a hard-wrapped
  sentence, quoted whole, but never a heading glued to the sentence below it.
"""

from __future__ import annotations

import re
from typing import Callable

from glassrag.chunk.units import sentence_spans

FENCE = re.compile(r"^\s*(```|~~~)")
SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
TABLE_ROW = re.compile(r"^\s*\|")
BLOCK = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\||#)")
CLOSED = re.compile(r"[.!?:;][\"'”’)\]]*$")
MAX_JOINED = 4  # lines; a quote longer than this is a paragraph, not a sentence
MIN_WRAPPED = 40  # characters: a hard-wrapped line reaches the margin; a heading ("2.1 Sensor errors") does not
SECTION_NUMBER = re.compile(r"^\s*\d+(?:\.\d+)*\.?\s")


def unquotable_lines(text: str) -> list[tuple[int, int]]:
    """[start, end) spans of the lines of code, table header rows and table separators."""
    lines, pos = [], 0
    for line in text.split("\n"):
        lines.append((pos, pos + len(line), line))
        pos += len(line) + 1
    out: list[tuple[int, int]] = []
    fenced, blank_before = False, True
    for i, (a, b, line) in enumerate(lines):
        nxt = lines[i + 1][2] if i + 1 < len(lines) else ""
        if FENCE.match(line):
            fenced = not fenced
            out.append((a, b))
        elif fenced or (blank_before and re.match(r"^(?: {4}|\t)\S", line)):
            out.append((a, b))
        elif SEPARATOR.match(line) and "-" in line and ("|" in line or TABLE_ROW.match(nxt)):
            out.append((a, b))
        elif TABLE_ROW.match(line) and SEPARATOR.match(nxt) and "|" in nxt:
            out.append((a, b))
        blank_before = not line.strip() or (blank_before and bool(re.match(r"^(?: {4}|\t)\S", line)))
    return out


def quotable_sentences(text: str, analyze: Callable[[str], list[str]]) -> list[tuple[int, int, frozenset[str]]]:
    """The sentences a quote may be, as (start, end, terms), hard-wrapped ones joined."""
    banned = unquotable_lines(text)

    def is_banned(a: int, b: int) -> bool:
        return any(x < b and a < y for x, y in banned)

    spans = [(a, b) for a, b in sentence_spans(text) if not is_banned(a, b)]
    joined: list[tuple[int, int]] = []
    lines_in = 0
    for a, b in spans:
        if joined and lines_in < MAX_JOINED:
            pa, pb = joined[-1]
            gap = text[pb:a]
            line_start = text.rfind("\n", 0, a) + 1
            first_line = text[text.rfind("\n", 0, pb) + 1:pb]
            if (gap.count("\n") == 1 and not gap.strip() and not CLOSED.search(text[pa:pb])
                    and len(first_line) >= MIN_WRAPPED and not SECTION_NUMBER.match(first_line)
                    and not BLOCK.match(text[line_start:b]) and not BLOCK.match(text[text.rfind("\n", 0, pa) + 1:pb])):
                joined[-1] = (pa, b)
                lines_in += 1
                continue
        joined.append((a, b))
        lines_in = 1
    return [(a, b, frozenset(analyze(text[a:b]))) for a, b in joined]
