"""Tables as text, the same way for sheets, slides and Word tables.

Every row below the header becomes a record of `header: value` lines, so a price or a
limit is found together with its column name (`Price (EUR): 465`), and a record still
reads on its own when a chunk holds only part of a table:

    3.1 Batteries                        a row with one filled cell: a caption or a note

    Part number: 740-0040                the first row with two or more filled cells is the
    Battery: BP-40 battery               header; every later row is a record, one line per
    Price (EUR): 189                     filled cell, records separated by a blank line

A grid table (Word, PowerPoint) says which row is its header: its first row that is not a
caption merged across the whole width, even when only one of its cells is filled (`RISK`
over six unnamed columns). A header cell left empty names nothing: in the leftmost column
(or a column left of every header, in a sheet) that is the row labels' column, and a
record shows its label alone on its first line.
"""

from __future__ import annotations

import re
from typing import Callable, Mapping, Sequence


def column_number(i: int) -> str:
    return f"column {i + 1}"


def one_line(text: str) -> str:
    """A cell's text on one line: runs of white space (line breaks too) become one space."""
    return re.sub(r"\s+", " ", text).strip()


class TableText:
    """Collects a table's rows, one at a time, as caption lines and `header: value` records.

    Rows are given as {column index: cell text}; empty cells may be left out. Rows arrive
    one by one so that a sheet of 100,000 rows is never held twice.
    """

    def __init__(self, column_name: Callable[[int], str] = column_number,
                 header: Mapping[int, str] | None = None) -> None:
        self.column_name = column_name
        self.header: dict[int, str] | None = dict(header) if header else None
        self._header_line = ""
        self._blocks: list[str] = []
        self._records = 0
        self._labels: int | None = None  # the row labels' column: its header cell is empty

    def add_row(self, cells: Mapping[int, str], header_ok: bool = True,
                is_header: bool = False) -> None:
        """Add one row. `header_ok=False` says the row cannot be a header (it holds
        numbers): without a header so far, it is a record under column names.
        `is_header=True` says it is the header, however few of its cells are filled;
        `columns` then records which columns the table has."""
        filled = {i: one_line(v) for i, v in sorted(cells.items()) if v and v.strip()}
        if not filled:
            return
        if is_header:
            self.set_header(filled, columns=list(cells))
            return
        if len(filled) == 1 and not (self.header and self._labels is not None):
            self._blocks.append(cells[next(iter(filled))].strip())  # keeps its line breaks
            return
        if self.header is None and header_ok and not self._records:
            self.set_header(filled)
            return
        header = self.header or {}
        if header and not self._records and self._labels is None and min(filled) < min(header):
            self._labels = min(filled)  # a column left of every header: the row labels
        lines = []
        for i, v in filled.items():
            if i == self._labels:
                lines.append(v)
            else:
                lines.append(f"{header.get(i) or self.column_name(i)}: {v}")
        self._blocks.append("\n".join(lines))
        self._records += 1

    @property
    def records(self) -> int:
        return self._records

    def rename(self, header: Mapping[int, str]) -> None:
        """Replace the column names before any record was added (a second header row)."""
        self.header = dict(header)
        self._header_line = " | ".join(self.header.values())

    def set_header(self, header: Mapping[int, str], columns: list[int] | None = None) -> None:
        """Take `header` as the column names. Given the table's `columns`, an empty first
        column of the header marks the row labels' column."""
        self.header = dict(header)
        first = min(columns) if columns else None
        self._labels = first if first is not None and first not in self.header else None
        self._header_line = " | ".join(self.header.values())
        self._blocks.append("")  # the header's place, filled only if no record follows

    def text(self) -> str:
        blocks = [b if b else (self._header_line if not self._records else "")
                  for b in self._blocks]
        return "\n\n".join(b for b in blocks if b)


def render_table(rows: Sequence[Sequence[str]],
                 column_name: Callable[[int], str] = column_number,
                 header_row: bool = False) -> str:
    """A whole table (rows of cell texts, "" for an empty cell) as text; see TableText.
    With `header_row`, the first row of more than one cell is the header (a row given as
    one cell is a caption merged across the table)."""
    table = TableText(column_name)
    for row in rows:
        is_header = (header_row and table.header is None and len(row) > 1
                     and any(cell.strip() for cell in row))
        table.add_row(dict(enumerate(row)), is_header=is_header)
    return table.text()
