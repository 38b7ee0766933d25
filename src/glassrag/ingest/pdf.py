"""PDF with pypdfium2: one section per page, located as `page N`, or by the page's label
when the PDF gives it one (`page iv`, `page A-3`), or by the number printed on it when it
has no labels and that number is not its place in the file (`p. 696 (PDF page 1)`).

What a PDF's text layer gives is lines, in drawing order. The loader
- finds printed page numbers: a number in a page's header or footer lines that equals its
  physical number plus one offset shared by most pages (`printed_numbers`);
- drops running headers and footers: a line at the top or bottom of more than half of
  the pages, at the same height, with digits masked (`Page 3 of 9` matches `Page 4 of
  9`), from 3 pages up; and a line at the top or bottom of 3 or more pages whose number
  changes (`Chapter 2. Roles 11`, `Chapter 2. Roles 12`); top and bottom by drawing order
  and by height, so a print stamp drawn last but placed in the margin goes too;
- joins the lines a paragraph was wrapped into, so sentences are whole: a line was wrapped
  when it ends near the text's right edge and the next line's first word would not have
  fitted after it (see `reflow`); a line-end hyphen is kept or undone by what the rest of
  the document spells (`glassrag.ingest.hyphens`);
- records pages without text that show an image in `metadata["empty_pages"]`: on a scan
  they are images that need OCR, which the quality check reports; pages with neither text
  nor image are blank (`metadata["blank_pages"]`), not scans;
- takes the title from the metadata unless it is boilerplate or not what the first page
  shows largest (`glassrag.ingest.titles`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glassrag.errors import IngestError
from glassrag.ingest.base import Extracted, TextBuilder, require_extra
from glassrag.ingest.hyphens import Vocabulary, join_lines, join_marks
from glassrag.ingest.sniff import expect_pdf
from glassrag.ingest.titles import choose_title, is_furniture, readable_stem, tidy

EDGE_LINES = 2          # lines at the top and at the bottom of a page where running heads sit
REPEATED_SHARE = 0.5    # a running head is on more than this share of the pages ...
MIN_PAGES = 3           # ... of a PDF with at least this many pages
RIGHT_EDGE_SHARE = 0.8  # a page's longest line reaching less than this is not full width
TITLE_MAX_WORDS = 12
CHANGING_MIN_PAGES = 3  # an edge line whose number changes is furniture from this many pages
PRINTED_MAX = 9999      # a printed page number has at most four digits
# dates and times are no page numbers: 06/22/2015, 2024-12-15, 15.12.2024, 14:30:22
DATE_OR_TIME = re.compile(r"(?<!\d)\d{1,4}([/.-])\d{1,2}\1\d{1,4}(?!\d)|(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?!\d)")
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
    images: list[bool] = []
    try:
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            pages.append(read_lines(textpage, pdfium.raw))
            widths.append(page.get_width())
            images.append(has_image(page, pdfium.raw))
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

    printed = {} if any(labels) else printed_numbers(pages)
    repeated = repeated_lines(pages)
    title_lines = largest_lines([ln for ln in pages[0] if _look(ln) not in repeated]) if pages else ""
    pages = drop_running_heads(pages)
    locators = page_locators(labels, printed)
    vocabulary = Vocabulary(ln.text for lines in pages for ln in lines)
    builder = TextBuilder()
    empty: list[int] = []
    blank: list[int] = []
    for n, (lines, width, locator) in enumerate(zip(pages, widths, locators), 1):
        text = "\n".join(reflow(lines, width, vocabulary)).strip()
        if not text:
            (empty if images[n - 1] else blank).append(n)
            continue
        builder.open_section(locator)
        builder.add(text)
    text, sections = builder.build()
    metadata: dict[str, Any] = {"pages": len(pages), "empty_pages": empty, "blank_pages": blank}
    if printed:
        metadata["printed_page_numbers"] = {str(k + 1): v for k, v in sorted(printed.items())}
    for key, name in (("Author", "author"), ("Subject", "subject"), ("Keywords", "keywords")):
        if info.get(key, "").strip():
            metadata[name] = info[key].strip()
    date = pdf_date(info.get("ModDate", "")) or pdf_date(info.get("CreationDate", ""))
    if date:
        metadata["date"] = date
    title = choose_title(info.get("Title", ""), title_lines, first_heading(pages, repeated),
                         readable_stem(path.stem))
    return Extracted(title=title, text=text, sections=sections, format="pdf",
                     metadata=metadata)


def has_image(page: Any, raw: Any) -> bool:
    """Whether the page shows an image (what a scanned page is)."""
    return next(iter(page.get_objects(filter=[raw.FPDF_PAGEOBJ_IMAGE])), None) is not None


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
    size: float = 0.0   # its largest font size (points)


def read_lines(textpage: Any, raw: Any) -> list[Line]:
    """A page's lines from pdfium's character list, with their geometry; pdfium ends each
    line with a generated CR LF. NULs are dropped; a surrogate pair is one character, a lone
    surrogate U+FFFD (text that could not be stored as UTF-8 otherwise)."""
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
    size = 0.0

    def finish() -> None:
        text = "".join(chars).rstrip()
        space = (sum(spaces) / len(spaces)) if spaces else (
            0.5 * sum(widths) / len(widths) if widths else 0.0)
        lines.append(Line(text, right, first_word or max(word_right - (word_left or 0), 0),
                          space, bottom or 0.0, line_left or 0.0, size))

    high = 0  # a UTF-16 high surrogate waiting for its low half
    for i in range(textpage.count_chars()):
        code = raw.FPDFText_GetUnicode(textpage, i)
        # pdfium counts UTF-16 code units: a character beyond U+FFFF (the math italic 𝑝
        # of a formula) is two indices, a high and a low surrogate, joined here into one
        if 0xD800 <= code < 0xDC00:
            high = code
            continue
        if 0xDC00 <= code < 0xE000:
            code = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00) if high else 0xFFFD
        elif high:
            chars.append("\ufffd")  # a high half with no low half: shown as unreadable
        high = 0
        ch = chr(code)
        if ch == "\n":
            finish()
            chars, right, bottom, line_left = [], 0.0, None, None
            word_left, word_right, first_word = None, 0.0, 0.0
            widths, spaces, size = [], [], 0.0
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
        size = max(size, raw.FPDFText_GetFontSize(textpage, i))
        right = max(right, char_right)
        bottom = char_bottom if bottom is None else min(bottom, char_bottom)
        line_left = left if line_left is None else line_left
        if word_left is None:
            word_left = left
        word_right = char_right
    if chars:
        finish()
    return lines


def _mask(text: str) -> str:
    """A line's text, lower case, with its spacing runs single and its digits masked."""
    return re.sub(r"\d+", "#", re.sub(r"\s+", " ", text.strip().lower()))


def _key(line: Line) -> tuple[str, float]:
    """A line's text with digits masked and its height rounded to 2 points: a running head
    says the same in the same place on every page, its page number aside."""
    return _mask(line.text), round(line.y / 2)


def _look(line: Line) -> tuple[str, int]:
    """A line's masked text (`_mask`) and its font size to the point: what a running head
    repeats. A title printed large on the first page and small in every page's header is
    not one repetition of the same look."""
    return _mask(line.text), round(line.size)


def repeated_lines(pages: list[list[Line]]) -> set[tuple[str, int]]:
    """The looks (`_look`) of the lines on more than REPEATED_SHARE of the pages, anywhere
    on them, from MIN_PAGES pages up: running heads (`CLOUD NATIVE` atop every page), which
    are no title."""
    if len(pages) < MIN_PAGES:
        return set()
    counts: dict[tuple[str, int], int] = {}
    for lines in pages:
        for look in {_look(ln) for ln in lines if ln.text.strip()}:
            counts[look] = counts.get(look, 0) + 1
    return {look for look, n in counts.items() if n > REPEATED_SHARE * len(pages)}


def edges(lines: list[Line]) -> tuple[set[int], set[int]]:
    """Indexes of the lines where running heads sit: the first and last EDGE_LINES
    non-blank lines in drawing order, and the EDGE_LINES highest and lowest on the page."""
    filled = [i for i, ln in enumerate(lines) if ln.text.strip()]
    top, bottom = set(filled[:EDGE_LINES]), set(filled[-EDGE_LINES:])
    if len({lines[i].y for i in filled}) > 1:  # lines without geometry have no height order
        by_height = sorted(filled, key=lambda i: lines[i].y)
        top |= set(by_height[-EDGE_LINES:])
        bottom |= set(by_height[:EDGE_LINES])
    return top, bottom


def drop_running_heads(pages: list[list[Line]]) -> list[list[Line]]:
    """Pages without the lines that repeat at their top or bottom edge (headers, footers).

    A line at an edge (see `edges`) is a running head when its digit-masked text, at the
    same height, is at that edge of more than REPEATED_SHARE of the pages; or when it is at
    that edge of CHANGING_MIN_PAGES or more pages with letters in it and different numbers
    (`Chapter 2. Roles 11`, `… 12`: a chapter's running head). It is dropped from that edge
    only."""
    if len(pages) < MIN_PAGES:
        return pages
    counts: list[dict[tuple[str, float], int]] = [{}, {}]
    numbers: list[dict[tuple[str, float], set[str]]] = [{}, {}]
    for lines in pages:
        for side, where in enumerate(edges(lines)):
            keys = {_key(lines[i]): lines[i].text for i in where}
            for key, text in keys.items():
                counts[side][key] = counts[side].get(key, 0) + 1
                numbers[side].setdefault(key, set()).add(" ".join(re.findall(r"\d+", text)))
    least = REPEATED_SHARE * len(pages)
    heads = [{k for k, n in counts[side].items()
              if n > least or (n >= CHANGING_MIN_PAGES and "#" in k[0]
                               and re.search(r"[^\W\d_]{2}", k[0])
                               and len(numbers[side][k]) > 1)}
             for side in (0, 1)]
    if not (heads[0] or heads[1]):
        return pages
    out = []
    for lines in pages:
        top, bottom = edges(lines)
        out.append([ln for i, ln in enumerate(lines)
                    if not ((i in top and _key(ln) in heads[0])
                            or (i in bottom and _key(ln) in heads[1]))])
    return out


def printed_numbers(pages: list[list[Line]]) -> dict[int, int]:
    """{page index: the page number printed on it}, where the pages print numbers that are
    their place in the file plus one offset other than 0.

    A page's candidates are the whole numbers (up to PRINTED_MAX) of its edge lines, not
    counting those of dates and times (DATE_OR_TIME: a listing's 06/22/2015 is no page 6); the
    offset (number − physical page number) must be shared by more than REPEATED_SHARE of
    the pages, from MIN_PAGES pages up. Only pages whose edges show their number get one."""
    if len(pages) < MIN_PAGES:
        return {}
    found: list[set[int]] = []
    offsets: dict[int, int] = {}
    for n, lines in enumerate(pages, 1):
        top, bottom = edges(lines)
        values = {int(v) for i in top | bottom for v in re.findall(r"(?<![\d.])\d{1,4}(?![\d.])",
                                                                    DATE_OR_TIME.sub(" ", lines[i].text))
                  if 0 < int(v) <= PRINTED_MAX}
        found.append(values)
        for off in {v - n for v in values}:
            offsets[off] = offsets.get(off, 0) + 1
    if not offsets:
        return {}
    offset, count = max(offsets.items(), key=lambda kv: (kv[1], -abs(kv[0])))
    if offset == 0 or count <= REPEATED_SHARE * len(pages):
        return {}
    return {i: i + 1 + offset for i, values in enumerate(found) if i + 1 + offset in values}


def reflow(lines: list[Line], page_width: float | None = None,
           vocabulary: Vocabulary | None = None) -> list[str]:
    """The page's lines with wrapped paragraphs joined again, so sentences are whole.

    Line A continues on line B when B's first word would not have fitted after A within
    the text's right edge: `A.right + space + B.first_word > right edge`, and B is not a
    list item. The right edge is the rightmost point a line of the page reaches, unless
    that is short of RIGHT_EDGE_SHARE of the left margin's mirror (`page_width - leftmost
    line start`): then the page holds only short lines, and the mirror is the edge.

    A line-end hyphen, and pdfium's mark for a hyphenation it recognises (U+0002), is kept
    or undone by `glassrag.ingest.hyphens` against the document's `vocabulary` (without
    one, against the page's own words)."""
    filled = [ln for ln in lines if ln.text.strip()]
    if not filled:
        return []
    if vocabulary is None:
        vocabulary = Vocabulary(ln.text for ln in filled)
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
            out[-1] = join_lines(out[-1], text, vocabulary)
        else:
            out.append(text)
        previous = line
    return [join_marks(text, vocabulary) for text in out]


def page_locators(labels: list[str], printed: dict[int, int] | None = None) -> list[str]:
    """Per page: `page <label>` where the PDF labels its pages and the label is unique;
    `p. <printed> (PDF page <n>)` where the page prints a number that is not its place in
    the file (see `printed_numbers`); else `page <n>` (1-based), or `PDF page <n>` when
    another page's label is already `<n>`."""
    printed = printed or {}
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    used = {label for label in labels if label and counts[label] == 1}
    out = []
    for i, label in enumerate(labels):
        n = str(i + 1)
        if label and counts[label] == 1:
            out.append(f"page {label}")
        elif i in printed:
            out.append(f"p. {printed[i]} (PDF page {n})")
        else:
            out.append(f"PDF page {n}" if n in used and label != n else f"page {n}")
    return out


def largest_lines(lines: list[Line]) -> str:
    """The text set in the largest font on a page (lines joined by a space), or "" when
    nothing on it is larger than the rest or the largest text is long (a page of one size)."""
    filled = [ln for ln in lines if ln.text.strip() and ln.size > 0]
    if not filled:
        return ""
    top = max(ln.size for ln in filled)
    big = [ln.text.strip() for ln in filled if ln.size >= top - 0.5]
    if len(big) == len(filled):
        return ""
    text = " ".join(big)
    return text if len(text.split()) <= 3 * TITLE_MAX_WORDS else ""


def first_heading(pages: list[list[Line]], repeated: set[tuple[str, int]] | None = None) -> str:
    """The first line that reads like a title: a few words, not ending a sentence. Lines
    that are page furniture are passed over: blank, rule lines, page labels, placeholders
    (`is_furniture`) and those `repeated` on most pages."""
    repeated = repeated or set()
    for lines in pages:
        for line in lines:
            text = line.text.strip()
            if not text or _look(line) in repeated or is_furniture(tidy(text)):
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
