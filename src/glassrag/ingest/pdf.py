"""PDF with pypdfium2: one section per page, located as `page N`, or by the page's label
when the PDF gives it one (`page iv`, `page A-3`).

What a PDF's text layer gives is lines, in drawing order. The loader
- drops running headers and footers: a line at the top or bottom of more than half of
  the pages, at the same height, with digits masked (`Page 3 of 9` matches `Page 4 of
  9`), from 3 pages up;
- joins the lines a paragraph was wrapped into, so sentences are whole: a line was wrapped
  when it ends near the text's right edge and the next line's first word would not have
  fitted after it (see `reflow`);
- records pages without any text in `metadata["empty_pages"]`: on a scan they are images
  that need OCR, which the quality check reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glassrag.errors import IngestError
from glassrag.ingest.base import Extracted, TextBuilder, require_extra
from glassrag.ingest.sniff import expect_pdf

EDGE_LINES = 2          # lines at the top and at the bottom of a page where running heads sit
REPEATED_SHARE = 0.5    # a running head is on more than this share of the pages ...
MIN_PAGES = 3           # ... of a PDF with at least this many pages
RIGHT_EDGE_SHARE = 0.8  # a page's longest line reaching less than this is not full width
TITLE_MAX_WORDS = 12
BULLET = re.compile(r"^\s*([-•▪◦*–]|\d+[.)]|[a-z][.)])\s")


def load_pdf(path: Path, data: bytes) -> Extracted:
    pdfium = require_extra("pypdfium2", path)
    expect_pdf(path, data)
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as err:
        if getattr(err, "err_code", None) == pdfium.raw.FPDF_ERR_PASSWORD:
            raise IngestError(str(path), "encrypted: the PDF needs a password to open",
                              "save or print an unprotected copy and ingest that") from None
        raise IngestError(str(path), f"damaged PDF: {err}",
                          "open it in a PDF viewer; if it opens there, print it to a new "
                          "PDF and ingest that") from None
    pages: list[list[Line]] = []
    widths: list[float] = []
    labels: list[str] = []
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            pages.append(read_lines(textpage, pdfium.raw))
            widths.append(page.get_width())
            textpage.close()
            page.close()
            labels.append(pdf.get_page_label(i).strip())
        info = pdf.get_metadata_dict()
    except pdfium.PdfiumError as err:
        raise IngestError(str(path), f"damaged PDF: page {len(pages) + 1}: {err}",
                          "open it in a PDF viewer; if it opens there, print it to a new "
                          "PDF and ingest that") from None
    finally:
        pdf.close()

    pages = drop_running_heads(pages)
    locators = page_locators(labels)
    builder = TextBuilder()
    empty: list[int] = []
    for n, (lines, width, locator) in enumerate(zip(pages, widths, locators), 1):
        text = "\n".join(reflow(lines, width)).strip()
        if not text:
            empty.append(n)
            continue
        builder.open_section(locator)
        builder.add(text)
    text, sections = builder.build()
    metadata: dict[str, Any] = {"pages": len(pages), "empty_pages": empty}
    for key, name in (("Author", "author"), ("Subject", "subject"), ("Keywords", "keywords")):
        if info.get(key, "").strip():
            metadata[name] = info[key].strip()
    date = pdf_date(info.get("ModDate", "")) or pdf_date(info.get("CreationDate", ""))
    if date:
        metadata["date"] = date
    title = info.get("Title", "").strip() or first_heading(pages) or path.stem
    return Extracted(title=title, text=text, sections=sections, format="pdf",
                     metadata=metadata)


@dataclass(frozen=True)
class Line:
    """One line of a page as pdfium laid it out: its text, where its last visible
    character ends, how wide its first word is, and its height on the page (PDF points)."""

    text: str
    right: float = 0.0
    first_word: float = 0.0
    space: float = 0.0  # the width of a space on this line (an estimate where it has none)
    y: float = 0.0      # the lowest bottom of its characters
    left: float = 0.0   # where its first visible character starts


def read_lines(textpage: Any, raw: Any) -> list[Line]:
    """A page's lines from pdfium's character list, with their geometry; pdfium ends each
    line with a generated CR LF. NULs are dropped."""
    lines: list[Line] = []
    chars: list[str] = []
    right = 0.0
    bottom: float | None = None
    line_left: float | None = None
    word_left: float | None = None
    word_right = 0.0
    first_word = 0.0
    widths: list[float] = []
    spaces: list[float] = []

    def finish() -> None:
        text = "".join(chars).rstrip()
        space = (sum(spaces) / len(spaces)) if spaces else (
            0.5 * sum(widths) / len(widths) if widths else 0.0)
        lines.append(Line(text, right, first_word or max(word_right - (word_left or 0), 0),
                          space, bottom or 0.0, line_left or 0.0))

    for i in range(textpage.count_chars()):
        ch = chr(raw.FPDFText_GetUnicode(textpage, i))
        if ch == "\n":
            finish()
            chars, right, bottom, line_left = [], 0.0, None, None
            word_left, word_right, first_word = None, 0.0, 0.0
            widths, spaces = [], []
            continue
        if ch in "\r\x00":
            continue
        chars.append(ch)
        left, char_bottom, char_right, _ = textpage.get_charbox(i)
        if ch.isspace():
            spaces.append(max(char_right - left, 0.0))
            if word_left is not None and not first_word:
                first_word = word_right - word_left
            continue
        widths.append(max(char_right - left, 0.0))
        right = max(right, char_right)
        bottom = char_bottom if bottom is None else min(bottom, char_bottom)
        line_left = left if line_left is None else line_left
        if word_left is None:
            word_left = left
        word_right = char_right
    if chars:
        finish()
    return lines


def _key(line: Line) -> tuple[str, float]:
    """A line's text with digits masked and its height rounded to 2 points: a running head
    says the same in the same place on every page, its page number aside."""
    text = re.sub(r"\d+", "#", re.sub(r"\s+", " ", line.text.strip().lower()))
    return text, round(line.y / 2)


def drop_running_heads(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without the lines that repeat at their top or bottom edge (headers, footers).

    A line is a running head when its digit-masked text, at the same height, is among the
    first EDGE_LINES non-blank lines (a header) or the last EDGE_LINES (a footer) of more
    than REPEATED_SHARE of the pages; it is dropped from that edge only."""
    if len(pages) < MIN_PAGES:
        return pages
    tops: dict[tuple[str, float], int] = {}
    bottoms: dict[tuple[str, float], int] = {}
    for lines in pages:
        body = [ln for ln in lines if ln.text.strip()]
        for counts, edge in ((tops, body[:EDGE_LINES]), (bottoms, body[-EDGE_LINES:])):
            for key in {_key(t) for t in edge}:
                counts[key] = counts.get(key, 0) + 1
    least = REPEATED_SHARE * len(pages)
    top = {k for k, n in tops.items() if n > least}
    bottom = {k for k, n in bottoms.items() if n > least}
    if not (top or bottom):
        return pages
    out = []
    for lines in pages:
        filled = [i for i, ln in enumerate(lines) if ln.text.strip()]
        head, foot = set(filled[:EDGE_LINES]), set(filled[-EDGE_LINES:])
        out.append([ln for i, ln in enumerate(lines)
                    if not ((i in head and _key(ln) in top)
                            or (i in foot and _key(ln) in bottom))])
    return out


def reflow(lines: list[Line], page_width: float | None = None) -> list[str]:
    """The page's lines with wrapped paragraphs joined again, so sentences are whole.

    Line A continues on line B when B's first word would not have fitted after A within
    the text's right edge: `A.right + space + B.first_word > right edge`, and B is not a
    list item. The right edge is the rightmost point a line of the page reaches, unless
    that is short of RIGHT_EDGE_SHARE of the left margin's mirror (`page_width - leftmost
    line start`): then the page holds only short lines, and the mirror is the edge.

    A line ending in a hyphen joins without a space and keeps it (`high-` + `visibility`),
    as a PDF cannot tell a hyphen from a hyphenation; pdfium's mark for a hyphenation it
    does recognise (U+0002) is dropped."""
    filled = [ln for ln in lines if ln.text.strip()]
    if not filled:
        return []
    edge = max(ln.right for ln in filled)
    if page_width:
        mirror = page_width - min(ln.left for ln in filled)
        edge = edge if edge >= RIGHT_EDGE_SHARE * mirror else mirror
    out: list[str] = []
    previous: Line | None = None
    for line in filled:
        text = line.text.strip()
        wrapped = (previous is not None and not BULLET.match(text)
                   and previous.right + previous.space + line.first_word > edge + 0.5)
        if wrapped and out:
            prev = out[-1]
            if prev.endswith("\x02"):
                out[-1] = prev[:-1] + text
            elif prev.endswith("-") and len(prev) > 1 and prev[-2].isalnum():
                out[-1] = prev + text
            else:
                out[-1] = prev + " " + text
        else:
            out.append(text)
        previous = line
    return [text.replace("\x02", "") for text in out]


def page_locators(labels: list[str]) -> list[str]:
    """`page <label>` where the PDF labels its pages and the label is unique, else
    `page <number>` (1-based)."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return [f"page {label}" if label and counts[label] == 1 else f"page {n}"
            for n, label in enumerate(labels, 1)]


def first_heading(pages: list[list[Line]]) -> str:
    """The first line that reads like a title: a few words, not ending a sentence."""
    for lines in pages:
        for line in lines:
            text = line.text.strip()
            if not text:
                continue
            words = text.split()
            if (len(words) <= TITLE_MAX_WORDS and re.search(r"[^\W\d_]{2}", text)
                    and not text.endswith((".", ",", ";"))):
                return text
            return ""
    return ""


def pdf_date(value: str) -> str:
    """`D:20240916093000+01'00'` (ISO 32000-1, 7.9.4) to `2024-09-16`; "" if it is not one."""
    m = re.match(r"(?:D:)?(\d{4})(\d{2})?(\d{2})?", value.strip())
    if not m:
        return ""
    return "-".join(p for p in (m.group(1), m.group(2) or "01", m.group(3) or "01"))
