"""HTML: headings open sections; paragraphs, list items and table rows become lines;
scripts, styles and other non-content elements are dropped. The title is the first
`<title>` unless it is boilerplate or disagrees with the first `<h1>` (`choose_title`)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from glassrag.ingest.base import BEFORE_HEADINGS, Extracted, TextBuilder, decode, heading_locators
from glassrag.ingest.titles import choose_title, readable_stem

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
DROPPED = {"script", "style", "noscript", "template", "svg", "head"}
BLOCKS = {"p", "div", "li", "tr", "br", "section", "article", "pre", "blockquote",
          "dt", "dd", "table", "ul", "ol", "header", "footer", "main", "nav", "figcaption"}
CELLS = {"td", "th"}


class _Walker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = TextBuilder()
        self.builder.open_section(BEFORE_HEADINGS)
        self.title = ""
        self.first_h1 = ""
        self._in_title = False
        self._skip = 0
        self._heading: int | None = None
        self._line: list[str] = []
        self._stack: list[tuple[int, str]] = []

    def _flush(self) -> None:
        line = re.sub(r"[ \t\f\v]+", " ", "".join(self._line)).strip(" |")
        self._line = []
        if not line:
            return
        if self._heading is not None:
            level = self._heading
            while self._stack and self._stack[-1][0] >= level:
                self._stack.pop()
            self._stack.append((level, line))
            if level == 1 and not self.first_h1:
                self.first_h1 = line
            self.builder.open_section(f"§ {line}", tuple(h for _, h in self._stack))
        self.builder.add(line)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in DROPPED:
            self._skip += 1
        elif tag == "title":
            self._in_title = not self.title  # the first only: an inline SVG has titles too
        elif tag in HEADINGS:
            self._flush()
            self._heading = HEADINGS[tag]
        elif tag in BLOCKS:
            self._flush()
        elif tag in CELLS and self._line:
            self._line.append(" | ")

    def handle_endtag(self, tag: str) -> None:
        if tag in DROPPED:
            self._skip = max(0, self._skip - 1)
        elif tag == "title":
            self._in_title = False
        elif tag in HEADINGS:
            self._flush()
            self._heading = None
        elif tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self._line.append(data.replace("\n", " "))


def load_html(path: Path, data: bytes) -> Extracted:
    walker = _Walker()
    walker.feed(decode(path, data))
    walker.close()
    walker._flush()
    text, sections = walker.builder.build()
    sections = heading_locators(sections)
    title = choose_title(walker.title, walker.first_h1, "", readable_stem(path.stem))
    return Extracted(title=title, text=text, sections=sections, format="html")
