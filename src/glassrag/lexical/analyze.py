"""The analyzer: text to the tokens BM25 and LSA count.

Lowercase; Unicode word tokens; optional stopword removal and Snowball stemming;
identifiers such as `E-4107`, `TX-2000` or `4.2` (word runs joined by `-`, `.` or `/`
that contain a digit) are kept whole as well as split into their parts, so an exact
identifier outweighs its near-twins while a search for `4107` still matches.

Before that, look-alike characters are made one (`fold`): the dashes a typesetter or a
word processor puts in place of `-` (en dash `FAA–2020–0686`, non-breaking hyphen, minus
sign, …) become `-`, and non-breaking and other fixed-width spaces become a space; soft
hyphens are dropped. Queries and documents go through the same analyzer, so an identifier
typed with a plain hyphen finds the one printed with en dashes, and the other way round.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import Stemmer

from glassrag.errors import UnknownNameError
from glassrag.lexical.stopwords import STOPWORDS

_RUN = re.compile(r"\w+(?:[-./]\w+)*")
# U+2010 hyphen, U+2011 non-breaking hyphen, U+2012 figure dash, U+2013 en dash, U+2014 em
# dash, U+2015 horizontal bar, U+2212 minus sign, U+FE58 small em dash, U+FE63 small
# hyphen-minus, U+FF0D fullwidth hyphen-minus
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
# U+00A0 no-break space, U+2007 figure space, U+202F narrow no-break space, U+2000-U+200A
# fixed-width spaces, U+3000 ideographic space
SPACES = "\u00a0\u2007\u202f\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a\u3000"
_FOLD = {**{ord(c): "-" for c in DASHES}, **{ord(c): " " for c in SPACES},
         0x00AD: None, 0x200B: None}  # soft hyphen and zero-width space: dropped


def fold(text: str) -> str:
    """Text with look-alike dashes made `-`, fixed-width spaces made ` `, soft hyphens and
    zero-width spaces dropped (see the module docstring)."""
    return text.translate(_FOLD)
_PART = re.compile(r"\w+")
# The highlighter analyses a passage one word at a time (present/highlight.py): 500 calls a
# question, a third of a demo ask's time under load (issue 30). Texts this short are kept with
# their tokens, up to SHORT_KEPT of them (then the memo starts again).
SHORT = 40
SHORT_KEPT = 100_000
# The ask page analyses the question the pipeline has just analysed (for its BM25 table): the
# last RECENT texts of up to RECENT_CHARS characters (a question's limit) are kept too.
RECENT = 64
RECENT_CHARS = 4096


class Analyzer:
    """Callable text → list of tokens. JSON-safe parameters; the stemmer loads lazily."""

    def __init__(self, stopwords: str = "lucene", stem: bool = True, identifiers: bool = True,
                 min_length: int = 1) -> None:
        if stopwords not in STOPWORDS:
            raise UnknownNameError("stopword list", stopwords, list(STOPWORDS))
        self.stopwords = stopwords
        self.stem = stem
        self.identifiers = identifiers
        self.min_length = min_length
        self._stop = STOPWORDS[stopwords]
        self._stemmer: Any = None
        self._cache: dict[str, str] = {}
        self._short: dict[str, tuple[str, ...]] = {}
        self._recent = lru_cache(maxsize=RECENT)(lambda text: tuple(self._analyze(text)))

    def params(self) -> dict[str, Any]:
        return {"stopwords": self.stopwords, "stem": self.stem,
                "identifiers": self.identifiers, "min_length": self.min_length}

    def words(self, text: str) -> list[str]:
        """Tokens before stemming (lowercased, stopwords removed)."""
        out: list[str] = []
        stop, min_len = self._stop, self.min_length
        for run in _RUN.findall(fold(text).lower()):
            parts = _PART.findall(run)
            if self.identifiers and len(parts) > 1 and any(c.isdigit() for c in run):
                out.append(run)
            out.extend(p for p in parts if len(p) >= min_len and p not in stop)
        return out

    def __call__(self, text: str) -> list[str]:
        if len(text) > SHORT:
            return list(self._recent(text)) if len(text) <= RECENT_CHARS else self._analyze(text)
        kept = self._short.get(text)
        if kept is None:
            if len(self._short) >= SHORT_KEPT:
                self._short.clear()
            kept = self._short[text] = tuple(self._analyze(text))
        return list(kept)

    def _analyze(self, text: str) -> list[str]:
        words = self.words(text)
        if not self.stem:
            return words
        if self._stemmer is None:
            self._stemmer = Stemmer.Stemmer("english")
        cache = self._cache
        missing = [w for w in set(words) if w not in cache]
        if missing:
            stemmed = self._stemmer.stemWords(
                [w if not any(c.isdigit() for c in w) else "" for w in missing])
            for w, s in zip(missing, stemmed):
                cache[w] = s or w
        return [cache[w] for w in words]
