"""The analyzer: text to the tokens BM25 and LSA count.

Lowercase; Unicode word tokens; optional stopword removal and Snowball stemming;
identifiers such as `E-4107`, `TX-2000` or `4.2` (word runs joined by `-`, `.` or `/`
that contain a digit) are kept whole as well as split into their parts, so an exact
identifier outweighs its near-twins while a search for `4107` still matches.
"""

from __future__ import annotations

import re
from typing import Any

import Stemmer

from glassrag.errors import UnknownNameError
from glassrag.lexical.stopwords import STOPWORDS

_RUN = re.compile(r"\w+(?:[-./]\w+)*")
_PART = re.compile(r"\w+")


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

    def params(self) -> dict[str, Any]:
        return {"stopwords": self.stopwords, "stem": self.stem,
                "identifiers": self.identifiers, "min_length": self.min_length}

    def words(self, text: str) -> list[str]:
        """Tokens before stemming (lowercased, stopwords removed)."""
        out: list[str] = []
        stop, min_len = self._stop, self.min_length
        for run in _RUN.findall(text.lower()):
            parts = _PART.findall(run)
            if self.identifiers and len(parts) > 1 and any(c.isdigit() for c in run):
                out.append(run)
            out.extend(p for p in parts if len(p) >= min_len and p not in stop)
        return out

    def __call__(self, text: str) -> list[str]:
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
