"""Word (DOCX) with python-docx: heading paragraphs open sections located as
`§ <heading text>`, like Markdown; tables become `header: value` records, like sheets.

A paragraph is a heading when its style is `Title` or `Heading N`, or when it or its
style sets an outline level (which is how Word marks headings in other languages'
styles, such as `Überschrift 1`). Page headers, footers and comments are not read.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from glassrag.ingest.base import (BEFORE_HEADINGS, Extracted, TextBuilder, heading_locators,
                                  office_metadata, require_extra)
from glassrag.ingest.sniff import expect_ooxml
from glassrag.ingest.titles import choose_title, readable_stem
from glassrag.ingest.tables import one_line, render_table

HEADING_STYLE = re.compile(r"^heading\s+(\d)$", re.IGNORECASE)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def load_docx(path: Path, data: bytes) -> Extracted:
    docx = require_extra("docx", path, "python-docx")
    expect_ooxml(path, data, "docx")
    document = docx.Document(io.BytesIO(data))
    from docx.table import Table

    builder = TextBuilder()
    builder.open_section(BEFORE_HEADINGS)
    stack: list[tuple[int, str]] = []
    first_heading = ""
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            text = render_table(table_rows(block), header_row=True)
            if text:
                builder.add(text)
            continue
        text = block.text.strip()
        if not text:
            continue
        level = heading_level(block)
        if level is None:
            builder.add(text)
            continue
        heading = one_line(text)
        first_heading = first_heading or heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        builder.open_section(f"§ {heading}", tuple(h for _, h in stack))
        builder.add(heading)
    text, sections = builder.build()
    sections = heading_locators(sections)
    props = document.core_properties
    metadata = office_metadata(props)
    return Extracted(title=choose_title(props.title or "", "", first_heading, readable_stem(path.stem)),
                     text=text, sections=sections, format="docx", metadata=metadata)


def heading_level(paragraph: Any) -> int | None:
    """0 for a `Title`, N for `Heading N` or outline level N - 1; None for body text."""
    style = paragraph.style
    name = style.name if style is not None else ""
    if name and name.lower() == "title":
        return 0
    match = HEADING_STYLE.match(name or "")
    if match:
        return int(match.group(1))
    level = _outline_level(paragraph._p)
    while level is None and style is not None:
        level = _outline_level(style.element)
        style = style.base_style
    return level + 1 if level is not None and level < 9 else None  # 9 means body text


def _outline_level(element: Any) -> int | None:
    found = element.find(f"{W}pPr/{W}outlineLvl")
    if found is None:
        return None
    try:
        return int(found.get(f"{W}val"))
    except (TypeError, ValueError):
        return None


def table_rows(table: Any) -> list[list[str]]:
    """A table's cell texts row by row; a merged cell is read once, where it starts, and a
    row that is one cell merged across the whole width is [its text] (a caption)."""
    rows = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        if len(row.cells) > 1 and len({id(cell._tc) for cell in row.cells}) == 1:
            rows.append([one_line(row.cells[0].text)])
            continue
        for cell in row.cells:
            if id(cell._tc) in seen:
                cells.append("")
                continue
            seen.add(id(cell._tc))
            cells.append(one_line(cell.text))
        rows.append(cells)
    return rows
