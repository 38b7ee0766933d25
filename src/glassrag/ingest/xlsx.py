"""Excel (XLSX) with openpyxl in read-only mode: one section per table region, located as
`sheet NAME (A1:D40)`.

A region is a run of non-empty rows; an empty row ends it, so a sheet holding several
tables gives one section per table. Rows are rendered as `header: value` records (see
`glassrag.ingest.tables`), numbers as their cell format shows them (`#,##0` gives
`24,900`), dates as ISO dates. Formulas are read by the value the file cached when it was
last saved; a formula without one is reported in the warnings, since its result is not
in the file. Rows are streamed: memory grows with the text extracted, not with openpyxl's
cell objects.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from pathlib import Path
from typing import Any, Iterator

from glassrag.ingest.base import Extracted, TextBuilder, require_extra
from glassrag.ingest.sniff import expect_ooxml
from glassrag.ingest.tables import TableText

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
            for region in regions(ws, formulas.get(ws.title, set()), missing):
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
    return Extracted(title=title or path.stem, text=text, sections=sections, format="xlsx",
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

    def add(self, row: int, cells: dict[int, str], all_text: bool) -> None:
        if len(cells) == 1 and not self.rows:
            line = next(iter(cells.values())).strip()
            if len(line) <= CAPTION_CHARS and "\n" not in line:
                self.caption = line
        if (len(cells) > 1 and self.table.header is None and not all_text and self.inherited
                and set(cells) <= set(self.inherited)):
            self.table.header = dict(self.inherited)
        self.table.add_row(cells, header_ok=all_text)
        self.rows += 1
        self.last_row = row
        self.min_col = min(self.min_col, *cells)
        self.max_col = max(self.max_col, *cells)


def regions(ws: Any, formulas: set[tuple[int, int]], missing: list[str]) -> Iterator[Region]:
    """The table regions of a read-only worksheet, one at a time; formula cells without a
    cached value are appended to `missing` as `C8`-style references.

    A region whose first row of several cells holds numbers (so it cannot be a header)
    takes the header of the region above it, when its columns are among that header's:
    that is a table split by an empty row."""
    region: Region | None = None
    header: dict[int, str] | None = None
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
            if region is not None:
                header = region.table.header or header
                yield region
                region = None
            continue
        if region is None:
            region = Region(number, header)
        region.add(number, cells, all_text)
    if region is not None:
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
