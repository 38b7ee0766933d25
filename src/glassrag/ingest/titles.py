"""A document's title: the first good candidate, in an order measured on real documents.

The loaders offer their candidates in this order (docs/formats.md shows the measurement):

1. the file's metadata title, unless it is boilerplate (`is_junk`) or, for a PDF, the first
   page sets other text larger than it (`Proceedings of the 45th Annual Meeting …` in the
   metadata, the paper's title in 14 pt on the page);
2. what the document shows as its title: the largest text on a PDF's first page, the first
   slide's title, the first heading of a Word file;
3. the first line that reads like a title (PDF);
4. the file name.
"""

from __future__ import annotations

import re

# titles that programs write for their users, and a table's header row read as a title
JUNK = re.compile(
    r"^(?:powerpoint presentation|presentation\d*|slide \d+|untitled(?: document)?\d*"
    r"|document\d*|title|microsoft (?:word|powerpoint|excel) - .*|.*\.(?:docx?|pptx?|xlsx?|pdf"
    r"|tex|dvi|indd|rtf|odt)|this section of the federal register.*|ibm\.com/redbooks.*"
    r"|(?:prepared|written|compiled|edited|created|presented) by .*)$",
    re.IGNORECASE)
MIN_LETTERS = 3


def is_junk(title: str) -> bool:
    """Whether a title says nothing about its document: empty, a program's default
    (`PowerPoint Presentation`, `Slide 1`, `Microsoft Word - x.docx`, a file name),
    boilerplate that heads every document of a series, a credit line (`Prepared by …`),
    or without MIN_LETTERS letters."""
    title = re.sub(r"\s+", " ", title).strip()
    letters = sum(ch.isalpha() for ch in title)
    return letters < MIN_LETTERS or bool(JUNK.match(title))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def choose_title(metadata: str, shown: str = "", first_line: str = "", file_stem: str = "") -> str:
    """The first good candidate: `metadata` (when not junk and, if `shown` is given, when
    at least half of its words are among `shown`'s), `shown`, `first_line`, `file_stem`."""
    metadata = re.sub(r"\s+", " ", metadata or "").strip()
    shown = re.sub(r"\s+", " ", shown or "").strip()
    if metadata and not is_junk(metadata):
        words = _words(metadata)
        if not shown or len(words & _words(shown)) * 2 >= len(words):
            return metadata
    for candidate in (shown, first_line):
        candidate = re.sub(r"\s+", " ", candidate or "").strip()
        if candidate and not is_junk(candidate):
            return candidate
    return file_stem
