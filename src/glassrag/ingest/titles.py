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
# a section heading of the body read as the title: "1 Introduction", "2.1 Background"
SECTION_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+(?:introduction|abstract|background|overview|summary|contents"
                             r"|preface|motivation|scope|purpose|related work|conclusions?)$", re.IGNORECASE)
# a print stamp after a form's name: "BOOKING ORDER Print Date 12/15/2024 14:30:22"
# (a date has a four-digit year: "Standard 4.0.3" is a version and stays)
PRINT_STAMP = re.compile(r"\s+(?:print(?:ed)?(?:\s+(?:date|on|at))?:?\s*)?(?:\d{1,2}[/.-]\d{1,2}[/.-]\d{4}|\d{4}-\d{2}-\d{2})"
                         r"(?:,?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]m)?)?\s*$", re.IGNORECASE)


def is_junk(title: str) -> bool:
    """Whether a title says nothing about its document: empty, a program's default
    (`PowerPoint Presentation`, `Slide 1`, `Microsoft Word - x.docx`, a file name),
    boilerplate that heads every document of a series, a credit line (`Prepared by …`),
    a body section's heading (`1 Introduction`), the end of a sentence (`them.`: lower case
    first, punctuation last), or without MIN_LETTERS letters."""
    title = re.sub(r"\s+", " ", title).strip()
    letters = sum(ch.isalpha() for ch in title)
    return (letters < MIN_LETTERS or bool(JUNK.match(title)) or bool(SECTION_HEADING.match(title))
            or (title[0].islower() and title[-1] in ".,;:"))  # the tail of a sentence: "them."


def tidy(title: str) -> str:
    """A candidate without its spacing runs and a trailing print stamp
    (`BOOKING ORDER Print Date 12/15/2024 14:30:22` -> `BOOKING ORDER`)."""
    return PRINT_STAMP.sub("", re.sub(r"\s+", " ", title or "").strip())


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def choose_title(metadata: str, shown: str = "", first_line: str = "", file_stem: str = "") -> str:
    """The first good candidate: `metadata` (when not junk and, if `shown` is given, when
    at least half of its words are among `shown`'s), `shown`, `first_line`, `file_stem`."""
    metadata, shown = tidy(metadata), tidy(shown)
    if metadata and not is_junk(metadata):
        words = _words(metadata)
        if not shown or len(words & _words(shown)) * 2 >= len(words):
            return metadata
    for candidate in (shown, first_line):
        candidate = tidy(candidate)
        if candidate and not is_junk(candidate):
            return candidate
    return file_stem
