"""Excel (XLSX) with openpyxl in read-only mode: one section per table region, located as
`sheet NAME (A1:D40)`.

A region is a run of non-empty rows; an empty row ends it, so a sheet holding several
tables gives one section per table, except after a region that holds only a header: its
table goes on below the gap. Rows are rendered as `header: value` records (see
`glassrag.ingest.tables`), numbers as their cell format shows them (`#,##0` gives
`24,900`), dates as ISO dates. Formulas are read by the value the file cached when it was
last saved; a formula without one is reported in the warnings, since its result is not
in the file. Headers are found with the sheet's structure: a row of numbers over rows of
text is a header (years over a mapping); a header cell merged across columns (read from
the sheet's `mergeCell` elements, which openpyxl's read-only mode does not give) names
every column under it, and a second header row below it completes the names (`2024 Q1`). Rows are streamed: memory grows with the text extracted, not with openpyxl's
cell objects.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path
from xml.etree.ElementTree import iterparse
from typing import Any, Iterator

from glassrag.ingest.base import Extracted, TextBuilder, require_extra
from glassrag.ingest.sniff import expect_ooxml
from glassrag.ingest.tables import TableText
from glassrag.ingest.titles import choose_title, readable_stem

CAPTION_CHARS = 80     # a region's first one-cell row up to this length is its caption
LISTED_CELLS = 5       # cells named in a warning, then "and N more"
FORMULA_TAG = re.compile(rb"<(?:\w+:)?f[\s>/]")


def load_xlsx(path: Path, data: bytes) -> Extracted:
    openpyxl = require_extra("openpyxl", path)
    expect_ooxml(path, data, "xlsx")
    from openpyxl.utils import get_column_letter

    formulas = formula_cells(openpyxl, data) if has_formulas(data) else {}
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    builder = TextBuilder()
    warnings: list[str] = []
    sheets: list[str] = []
    try:
        for ws in workbook.worksheets:
            if not hasattr(ws, "iter_rows"):  # a chart sheet
                continue
            sheets.append(ws.title)
            ws.reset_dimensions()  # trust the cells, not the stored dimension
            missing: list[str] = []
            merged = merged_cells(data, getattr(ws, "_worksheet_path", ""))
            for region in regions(ws, formulas.get(ws.title, set()), missing, merged):
                span = (f"{get_column_letter(region.min_col)}{region.first_row}:"
                        f"{get_column_letter(region.max_col)}{region.last_row}")
                path_ = (ws.title, region.caption) if region.caption else (ws.title,)
                builder.open_section(f"sheet {ws.title} ({span})", path_)
                builder.add(region.table.text())
            if missing:
                extra = len(missing) - LISTED_CELLS
                more = f" and {extra} more" if extra > 0 else ""
                warnings.append(
                    f"sheet {ws.title}: {len(missing)} formula cell(s) without a cached value "
                    f"({', '.join(missing[:LISTED_CELLS])}{more}), so their results are missing; "
                    "the file was saved by a program that does not calculate: open it in Excel "
                    "or LibreOffice, save it, and ingest again")
        title = (workbook.properties.title or "").strip()
        when = workbook.properties.modified or workbook.properties.created
    finally:
        workbook.close()
    text, sections = builder.build()
    metadata: dict[str, Any] = {"sheets": sheets}
    if when is not None:
        metadata["date"] = when.date().isoformat()
    return Extracted(title=choose_title(title, "", "", readable_stem(path.stem)), text=text, sections=sections, format="xlsx",
                     metadata=metadata, warnings=tuple(warnings))


class Region:
    """One table region of a sheet as it is read: its bounds, caption and text."""

    def __init__(self, row: int, header: dict[int, str] | None) -> None:
        from openpyxl.utils import get_column_letter

        self.first_row = self.last_row = row
        self.min_col = 10**9
        self.max_col = 0
        self.caption = ""
        self.rows = 0
        self.inherited = header  # the previous region's header, for a table split by a gap
        self.table = TableText(lambda i: f"column {get_column_letter(i)}")
        self.pending: dict[int, str] | None = None  # a row of numbers that may be a header
        self.groups: dict[int, str] = {}  # column -> its merged header cell's text

    def header_only(self) -> bool:
        return self.table.header is not None and not self.table.records and self.pending is None

    def add(self, row: int, cells: dict[int, str], all_text: bool,
            spans: dict[int, int] | None = None) -> None:
        """Add one row; `spans` maps a merged cell's first column to its last."""
        self.rows += 1
        self.last_row = row
        self.min_col = min(self.min_col, *cells)
        self.max_col = max(self.max_col, *cells)
        if len(cells) == 1 and self.rows == 1:
            line = next(iter(cells.values())).strip()
            if len(line) <= CAPTION_CHARS and "\n" not in line:
                self.caption = line
        if self.pending is not None:
            pending, self.pending = self.pending, None
            if all_text and len(cells) > 1:  # numbers over text: the numbers are the header
                self.table.add_row(pending, is_header=True)
                self.table.add_row(cells, header_ok=False)
                return
            self.table.add_row(pending, header_ok=False)
        elif self.groups and all_text and not self.table.records and self.table.header:
            self.table.rename(second_header_row(self.table.header, self.groups, cells))
            self.groups = {}
            return
        if len(cells) > 1 and self.table.header is None and not all_text:
            if self.inherited and set(cells) <= set(self.inherited):
                self.table.header = dict(self.inherited)
            elif not self.table.records:
                self.pending = cells
                return
        starts_header = len(cells) > 1 and all_text and self.table.header is None
        self.table.add_row(cells, header_ok=all_text)
        if starts_header and spans and self.table.header is not None:
            self.groups = {c: cells[first] for first, last in spans.items() if first in cells
                           for c in range(first, last + 1)}
            self.table.rename(dict(sorted({**self.groups, **self.table.header}.items())))

    def finish(self) -> None:
        if self.pending is not None:
            self.table.add_row(self.pending, header_ok=False)
            self.pending = None


def second_header_row(header: dict[int, str], groups: dict[int, str],
                      cells: dict[int, str]) -> dict[int, str]:
    """Column names from a merged group header and the row of sub-headers below it:
    `2024` over `Q1` is `2024 Q1`; a column without a sub-header keeps its name."""
    names = dict(header)
    for col, sub in cells.items():
        group = groups.get(col, "")
        names[col] = f"{group} {sub}" if group and group != sub else sub
    return dict(sorted(names.items()))


def merged_cells(data: bytes, part: str) -> dict[int, dict[int, int]]:
    """{row: {first column: last column}} of the merged cells of a worksheet part
    (`xl/worksheets/sheet1.xml`), read by streaming its `mergeCell` elements."""
    from openpyxl.utils.cell import range_boundaries

    found: dict[int, dict[int, int]] = {}
    if not part:
        return found
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive, archive.open(part) as sheet:
            for _, element in iterparse(sheet):
                if element.tag.rsplit("}", 1)[-1] == "mergeCell":
                    first_col, first_row, last_col, _ = range_boundaries(element.get("ref", ""))
                    if last_col > first_col:
                        found.setdefault(first_row, {})[first_col] = last_col
                element.clear()
    except (KeyError, ValueError, TypeError):
        return {}
    return found


def regions(ws: Any, formulas: set[tuple[int, int]], missing: list[str],
            merged: dict[int, dict[int, int]] | None = None) -> Iterator[Region]:
    """The table regions of a read-only worksheet, one at a time; formula cells without a
    cached value are appended to `missing` as `C8`-style references.

    A region whose first row of several cells holds numbers (so it cannot be a header)
    takes the header of the region above it, when its columns are among that header's:
    that is a table split by an empty row. A region that holds only a header goes on
    below empty rows when the next row's columns are among the header's. `merged` ({row: {first column: last column}}) gives the header
    cells merged across columns."""
    region: Region | None = None
    header: dict[int, str] | None = None
    merged = merged or {}
    gap = False  # empty rows were passed below a region that holds only a header
    for row in ws.iter_rows():
        cells: dict[int, str] = {}
        all_text = True
        number = 0
        for cell in row:
            if cell.value is None:
                if formulas and (getattr(cell, "row", 0), getattr(cell, "column", 0)) in formulas:
                    missing.append(cell.coordinate)
                continue
            text = cell_text(cell.value, cell.number_format)
            if text:
                cells[cell.column] = text
                number = cell.row
                all_text = all_text and isinstance(cell.value, str)
        if not cells:
            if region is not None and region.header_only():
                gap = True
            elif region is not None:
                region.finish()
                header = region.table.header or header
                yield region
                region = None
            continue
        if region is not None and gap and not set(cells) <= set(region.table.header or {}):
            yield region  # the lone header row was not this table's
            region = None
        gap = False
        if region is None:
            region = Region(number, header)
        region.add(number, cells, all_text, merged.get(number))
    if region is not None:
        region.finish()
        yield region


def cell_text(value: Any, number_format: str | None = "General") -> str:
    """A cell's value as the sheet shows it: numbers by their format, dates as ISO dates,
    booleans as TRUE/FALSE, text as it is (trimmed)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="minutes" if not value.second else "seconds")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (int, float)):
        return format_number(value, number_format or "General")
    return str(value).strip()


_TOKEN = re.compile(
    r'"(?P<quoted>[^"]*)"'                 # "EUR "
    r'|\[\$(?P<currency>[^\]-]*)[^\]]*\]'  # [$€-407]
    r'|\[[^\]]*\]'                         # [Red], [>100]: dropped
    r'|\\(?P<escaped>.)'                   # \€
    r'|[_*].'                              # padding and fill: dropped
    r'|(?P<digits>[0#?][0#?,.]*|\.[0#?]+)'
    r'|(?P<percent>%)'
    r'|(?P<other>.)', re.S)


def format_number(value: float, number_format: str) -> str:
    """A number as the common number formats show it: decimals (`0.00`), thousands
    separators (`#,##0`), percent (`0%`), literal text around the number (`"EUR "#,##0`,
    `[$€-407]#,##0.00`). Other formats (General, scientific, fractions) give up to 15
    significant digits."""
    section = number_format.split(";")[0]
    prefix: list[str] = []
    suffix: list[str] = []
    digits = ""
    percent = False
    for m in _TOKEN.finditer(section):
        literal = m.group("quoted") or m.group("currency") or m.group("escaped")
        other = m.group("other")
        if m.group("digits"):
            digits = digits or m.group("digits")
        elif m.group("percent"):
            percent = True
        elif literal or (other and other in " $€£¥()-+/:"):
            (suffix if digits else prefix).append(literal or other or "")
        elif other:  # a letter outside quotes: General, E+00, a date or text format
            digits = ""
            break
    if not digits:
        return _general(value)
    whole, _, fraction = digits.partition(".")
    decimals = sum(ch in "0#?" for ch in fraction)
    shown = value * 100 if percent else value
    number = f"{shown:,.{decimals}f}" if "," in whole else f"{shown:.{decimals}f}"
    return "".join(prefix) + number + ("%" if percent else "") + "".join(suffix).rstrip()


def _general(value: float) -> str:
    if isinstance(value, int) or (value.is_integer() and abs(value) < 1e15):
        return str(int(value))
    return f"{value:.15g}"


def has_formulas(data: bytes) -> bool:
    """Whether any worksheet holds a formula (an `<f>` element), read by streaming its XML."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for name in archive.namelist():
            if not (name.startswith("xl/worksheets/") and name.endswith(".xml")):
                continue
            with archive.open(name) as part:
                tail = b""
                while piece := part.read(1 << 20):
                    if FORMULA_TAG.search(tail + piece):
                        return True
                    tail = piece[-16:]
    return False


def formula_cells(openpyxl: Any, data: bytes) -> dict[str, set[tuple[int, int]]]:
    """(row, column) of every formula cell, per sheet: a second streamed pass that reads
    formulas instead of cached values."""
    workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=False)
    found: dict[str, set[tuple[int, int]]] = {}
    try:
        for ws in workbook.worksheets:
            if not hasattr(ws, "iter_rows"):
                continue
            ws.reset_dimensions()
            cells = {(c.row, c.column) for row in ws.iter_rows() for c in row
                     if getattr(c, "data_type", "") == "f"}
            if cells:
                found[ws.title] = cells
    finally:
        workbook.close()
    return found
