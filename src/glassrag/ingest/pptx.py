"""PowerPoint (PPTX) with python-pptx: one section per slide, located as `slide N: Title`
(`slide N` when the slide has no title).

A slide's text is its title, then its other shapes from top to bottom and left to right
(text boxes paragraph by paragraph, grouped shapes, tables as `header: value` records),
then, when INCLUDE_NOTES is on, its speaker notes under a `Speaker notes:` line. A table's
first row is its header (see `glassrag.ingest.tables`). The title is the file's, unless it
is a program's default (`PowerPoint Presentation`), then the first slide title, then the
file name.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Iterator

from glassrag.ingest.base import Extracted, TextBuilder, office_metadata, require_extra
from glassrag.ingest.sniff import expect_ooxml
from glassrag.ingest.titles import choose_title, readable_stem
from glassrag.ingest.tables import one_line, render_table

INCLUDE_NOTES = True  # speaker notes often hold what the presenter says and the slide does not
NOTES_LABEL = "Speaker notes:"


def load_pptx(path: Path, data: bytes, include_notes: bool = INCLUDE_NOTES) -> Extracted:
    pptx = require_extra("pptx", path, "python-pptx")
    expect_ooxml(path, data, "pptx")
    prs = pptx.Presentation(io.BytesIO(data))
    builder = TextBuilder()
    first_title = ""
    for n, slide in enumerate(prs.slides, 1):
        title_shape = slide.shapes.title
        title = one_line(title_shape.text_frame.text) if title_shape is not None else ""
        first_title = first_title or title
        builder.open_section(f"slide {n}: {title}" if title else f"slide {n}",
                             (title,) if title else ())
        if title:
            builder.add(title)
        title_id = title_shape.shape_id if title_shape is not None else None
        others = [s for s in slide.shapes if s.shape_id != title_id]
        for block in _shape_blocks(others):
            builder.add(block)
        if include_notes and slide.has_notes_slide:
            frame = slide.notes_slide.notes_text_frame
            notes = _frame_text(frame) if frame is not None else ""
            if notes:
                builder.add(f"{NOTES_LABEL}\n{notes}")
    text, sections = builder.build()
    props = prs.core_properties
    metadata = {"slides": len(prs.slides), **office_metadata(props)}
    return Extracted(title=choose_title(props.title or "", "", first_title, readable_stem(path.stem)),
                     text=text, sections=sections, format="pptx", metadata=metadata)


def _reading_order(shape: Any) -> tuple[int, int]:
    return (shape.top or 0, shape.left or 0)


def _shape_blocks(shapes: list[Any]) -> Iterator[str]:
    """The text of shapes in reading order; groups are opened, tables rendered as records."""
    for shape in sorted(shapes, key=_reading_order):
        if hasattr(shape, "shapes"):  # a group
            yield from _shape_blocks(list(shape.shapes))
        elif getattr(shape, "has_table", False) and shape.has_table:
            table = render_table(table_rows(shape.table), header_row=True)
            if table:
                yield table
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = _frame_text(shape.text_frame)
            if text:
                yield text


def table_rows(table: Any) -> list[list[str]]:
    """A table's cell texts row by row, as python-pptx gives its grid: a cell merged into
    another is "", a row that is one cell merged across the whole width is [its text]."""
    rows = []
    width = len(table.columns)
    for row in table.rows:
        cells = list(row.cells)
        if width > 1 and cells[0].is_merge_origin and cells[0].span_width == width:
            rows.append([one_line(cells[0].text)])
            continue
        rows.append(["" if cell.is_spanned else one_line(cell.text) for cell in cells])
    return rows


def _frame_text(frame: Any) -> str:
    """A text frame's paragraphs, one per line; a line break inside one (`\\v`) as a newline."""
    lines = [p.text.replace("\v", "\n").strip() for p in frame.paragraphs]
    return "\n".join(line for line in lines if line)
