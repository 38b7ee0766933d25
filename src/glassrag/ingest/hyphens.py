"""Line-end hyphens: a typesetter's hyphenation is undone, a compound's hyphen is kept.

A PDF cannot tell `infor-` + `mation` (hyphenation) from `dual-` + `encoder` (a compound
that broke at its hyphen). The document itself can: the rest of it spells the word one way
or the other. At a break between `a` and `b`:

1. `ab` occurs elsewhere in the document as a word: join (`sim-` `ilar` → `similar`);
2. else `a-b` occurs elsewhere: keep the hyphen (`hand-` `tagged` → `hand-tagged`);
3. else the junction looks like a name or a code (`a` ends, or `b` starts, with a capital or
   a digit: `Lucene-` `BM25`, `HMM-` `based`): keep;
4. else keep when both halves are words of the document on their own (`cosine-` `based`,
   `two-` `dimensional`), join when one is not (`untrustwor-` `thy`, `sur-` `face`).

Whether pdfium marked the hyphen as a hyphenation (U+0002) or left it as a character does
not change the decision: some typesetters (pandoc's LaTeX, Word) print every hyphen alike.
`Vocabulary` collects the words and hyphenated compounds of a document once, leaving out
the halves of broken words; `keep_hyphen` applies the rules to one break. docs/formats.md
counts both kinds of error on the real documents of the test suite.
"""

from __future__ import annotations

import re
from typing import Iterable

MARK = "\x02"  # pdfium's mark for a hyphen it takes for a hyphenation at a line end
HYPHENS = "-\u2010\u2011"  # hyphen-minus, hyphen, non-breaking hyphen
WORD = re.compile(r"[^\W_]+(?:[-\u2010\u2011][^\W_]+)*")
BREAK = re.compile(r"([^\W_]+)\x02\s*([^\W_]+)")


class Vocabulary:
    """The words (`similar`) and hyphenated compounds (`hand-tagged`) of a text's lines,
    lowercased. The halves of a broken word are not counted, since they are what is being
    decided: a word with a break mark in it, the last word of a line that ends in a hyphen
    or a mark, and the first word of the line after it."""

    def __init__(self, lines: Iterable[str] = ()) -> None:
        self.words: set[str] = set()
        broken = False
        for line in lines:
            line = line.strip()
            if not line:
                continue
            tokens = WORD.findall(BREAK.sub(" ", line))
            if broken and tokens:
                tokens = tokens[1:]
            broken = line.endswith(MARK) or (len(line) > 1 and line[-1] in HYPHENS
                                             and line[-2].isalnum())
            if broken and tokens:
                tokens = tokens[:-1]
            for token in tokens:
                token = re.sub(f"[{HYPHENS}]", "-", token.lower())
                self.words.add(token)
                if "-" in token:
                    self.words.update(token.split("-"))


def _code_like(a: str, b: str) -> bool:
    return a[-1].isupper() or a[-1].isdigit() or b[0].isupper() or b[0].isdigit()


def keep_hyphen(a: str, b: str, vocabulary: Vocabulary) -> bool:
    """Whether the break between `a` and `b` is a compound's hyphen (rules 1-4 above)."""
    joined, compound = (a + b).lower(), f"{a}-{b}".lower()
    if joined in vocabulary.words:
        return False
    if compound in vocabulary.words:
        return True
    if _code_like(a, b):
        return True
    return a.lower() in vocabulary.words and b.lower() in vocabulary.words


def join_marks(text: str, vocabulary: Vocabulary) -> str:
    """Every pdfium break mark inside `text` resolved: `HMM\\x02based` → `HMM-based`,
    `sim\\x02ilar` → `similar`; a mark with no word on one side is dropped."""
    def one(m: re.Match[str]) -> str:
        a, b = m.group(1), m.group(2)
        return f"{a}-{b}" if keep_hyphen(a, b, vocabulary) else a + b
    return BREAK.sub(one, text).replace(MARK, "")


def join_lines(first: str, second: str, vocabulary: Vocabulary) -> str:
    """Two wrapped lines as one: at a line-end hyphen by the rules above, else with a space.
    A line ending in pdfium's mark keeps it, for `join_marks` to resolve."""
    if first.endswith(MARK):
        return first + second
    if len(first) > 1 and first[-1] in HYPHENS and first[-2].isalnum():
        a = WORD.findall(first[:-1])
        b = WORD.findall(second)
        if a and b and not keep_hyphen(re.split(f"[{HYPHENS}]", a[-1])[-1],
                                       re.split(f"[{HYPHENS}]", b[0])[0], vocabulary):
            return first[:-1] + second
        return first + second
    return first + " " + second
