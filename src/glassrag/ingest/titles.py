"""A document's title: the first good candidate, in an order measured on real documents.

The loaders offer their candidates in this order (docs/formats.md shows the measurement):

1. the file's metadata title, unless it is boilerplate (`is_junk`) or, for a PDF, the first
   page sets other text larger than it (`Proceedings of the 45th Annual Meeting …` in the
   metadata, the paper's title in 14 pt on the page);
2. what the document shows as its title: the largest text on a PDF's first page, the first
   slide's title, the first heading of a Word file;
3. the first line that reads like a title (PDF);
4. the file name, made readable (`readable_stem`).

Every candidate is first rid of rule lines (`_____`) and a leading status tag (`[draft]`),
and refused when it is a placeholder, a page label, a program's default or a body section's
name (`is_junk`); the PDF loader also refuses the lines repeated on most pages (a running
header, a `DRAFT` watermark). Issue 49 lists the titles these rules replaced.
"""

from __future__ import annotations

import re

# titles that programs write for their users, and a table's header row read as a title
JUNK = re.compile(
    r"^(?:powerpoint presentation|presentation\d*|slide \d+|untitled(?: document)?\d*"
    r"|document\d*|title|microsoft (?:word|powerpoint|excel) - .*|.*\.(?:docx?|pptx?|xlsx?|pdf"
    r"|tex|dvi|indd|rtf|odt)|this section of the federal register.*|ibm\.com/redbooks.*"
    r"|(?:prepared|written|compiled|edited|created|presented) by .*"
    # one-word kinds of document that name no document
    r"|report|paper|article|index|home|notes|slides|publication|manuscript|memo|form|main|software"
    r"|abstract"
    # a body section's name without its number
    r"|(?:table of )?contents|introduction|overview|summary|executive summary|background|preface"
    r"|foreword|acknowledge?ments|references|bibliography|appendix(?: [a-z\d]+)?|conclusions?)$",
    re.IGNORECASE)
# page furniture: a placeholder or a page label ("Page 1", "Page 3 of 9", "p. 4", "- 2 -"), which
# a reader passes over to find the title (a credit line, by contrast, ends the search)
FURNITURE = re.compile(
    r"^(?:draft|confidential|internal|preliminary|tbd|tba|todo|placeholder|lorem ipsum.*"
    r"|page\s*\d+(?:\s*(?:of|/)\s*\d+)?|pp?\.\s*\d+|[-–—]?\s*\d+\s*[-–—]?)$", re.IGNORECASE)
# what a candidate is rid of before it is judged: rule lines drawn with characters, and a
# status tag before the title ("[draft] Cloud security", "DRAFT: Cloud security")
RULES = re.compile(r"[_=~.·…-]{3,}")
STATUS_TAG = re.compile(r"^(?:[\[(](?:draft|wip|todo|tbd|internal|confidential)[\])]\s*:?|"
                        r"(?:draft|wip)\s*[:–—-])\s*", re.IGNORECASE)
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
    page furniture (`is_furniture`: `DRAFT`, `Page 1`), a one-word kind of document (`report`),
    a body section's heading (`1 Introduction`), the end of a sentence (`them.`: lower case
    first, punctuation last), or without MIN_LETTERS letters."""
    title = re.sub(r"\s+", " ", title).strip()
    letters = sum(ch.isalpha() for ch in title)
    return (letters < MIN_LETTERS or is_furniture(title) or bool(JUNK.match(title))
            or bool(SECTION_HEADING.match(title)) or (title[0].islower() and title[-1] in ".,;:"))  # the tail of a sentence: "them."


def is_furniture(text: str) -> bool:
    """Whether a (`tidy`) line is page furniture to pass over: without MIN_LETTERS letters (a
    rule line, a page number), a placeholder (`DRAFT`) or a page label (`Page 1 of 9`)."""
    return sum(ch.isalpha() for ch in text) < MIN_LETTERS or bool(FURNITURE.match(text.strip()))


def tidy(title: str) -> str:
    """A candidate without its spacing runs, rule lines (`_____ Page 1` -> `Page 1`,
    `___P_a_g_e__1` -> `Page1`), a
    leading status tag (`[draft] Cloud security` -> `Cloud security`) and a trailing print
    stamp (`BOOKING ORDER Print Date 12/15/2024 14:30:22` -> `BOOKING ORDER`)."""
    title = title or ""
    if 2 * title.count("_") >= len(re.sub(r"\s", "", title)):  # a label drawn into a rule: ___P_a_g_e__1
        title = title.replace("_", "")
    title = re.sub(r"\s+", " ", RULES.sub(" ", title)).strip()
    return PRINT_STAMP.sub("", STATUS_TAG.sub("", title)).strip()


def readable_stem(stem: str) -> str:
    """A file name as a title, the last resort: underscores and the hyphens between words
    become spaces (`fomc-minutes-2023-03-22` -> `fomc minutes 2023-03-22`, `Bald_eagle` ->
    `Bald eagle`); a hyphen between two digits stays (a date)."""
    words = re.sub(r"(?<!\d)-|-(?!\d)", " ", stem.replace("_", " "))
    return re.sub(r"\s+", " ", words).strip() or stem


def _words(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.lower()))


def agree(metadata: str, shown: str) -> bool:
    """Whether two candidates name the same thing: more than half of the words of one are
    among the other's (`CLOUD NATIVE` shown, `Cloud Native Security Whitepaper` in the
    metadata agree; `Federal Reserve Board Publication` and `2023 Federal Reserve Stress Test
    Results` share 2 of 4 and 2 of 6 words, and do not)."""
    a, b = _words(metadata), _words(shown)
    common = len(a & b)
    return common * 2 > len(a) or common * 2 > len(b)


def choose_title(metadata: str, shown: str = "", first_line: str = "", file_stem: str = "") -> str:
    """The first good candidate: `metadata` (when not junk and, if a good `shown` is given,
    when they `agree`), `shown`, `first_line`, `file_stem` (as given: loaders pass it
    through `readable_stem`)."""
    metadata, shown = tidy(metadata), tidy(shown)
    shown = "" if is_junk(shown) else shown
    if metadata and not is_junk(metadata) and (not shown or agree(metadata, shown)):
        return metadata
    for candidate in (shown, first_line):
        candidate = tidy(candidate)
        if candidate and not is_junk(candidate):
            return candidate
    return file_stem
