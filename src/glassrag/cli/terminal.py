"""What `glassrag ask` writes: lines of text with a few styled spans, and one table, without rich.

rich's import was about 0.07 of the 0.34 CPU s a `glassrag ask` process cost (bench/startup.py,
issue 30), for a bold word, a yellow one, a dim line and a table of five columns. Here a span is
`(text, style)`; a style becomes an ANSI escape only when the stream is a terminal (and
NO_COLOR is not set), so a pipe or a file gets plain text, as rich gave it. Text from documents
must already have gone through `errors.visible` / `visible_lines`: this module adds escapes,
it never lets a document's through.

The table is rich's `Table(box=None)` as `glassrag ask` used it: a bold header row, one space
either side of every cell, each column as wide as its widest cell, and the one column that
does not fit wrapped at word boundaries within the width left (a terminal's width; 140 columns
for a pipe, as the commands' rich console had).
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import IO, Sequence

STYLES = {"bold": "1", "dim": "2", "yellow": "33"}
PIPE_WIDTH = 140  # the columns a pipe or a log gets, here and on the other commands' rich consoles (cli/common.py)
NARROWEST = 20  # a wrapped column never narrower than this, whatever the terminal says

Span = tuple[str, str]  # (text, style: a key of STYLES, or "" for none)


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def styled(stream: IO[str]) -> bool:
    """Whether escapes go to `stream`: a terminal, unless NO_COLOR (https://no-color.org) or TERM=dumb."""
    return is_terminal(stream) and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


def width(stream: IO[str]) -> int:
    """A terminal's columns (COLUMNS when set, as rich read it), PIPE_WIDTH for anything else."""
    if not is_terminal(stream):
        return PIPE_WIDTH
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        return PIPE_WIDTH


def render(spans: Sequence[Span | str], escapes: bool) -> str:
    """The spans as one string; a plain str is a span without a style."""
    parts = []
    for span in spans:
        text, style = (span, "") if isinstance(span, str) else span
        parts.append(f"\x1b[{STYLES[style]}m{text}\x1b[0m" if escapes and style and text else text)
    return "".join(parts)


def write(*spans: Span | str, stream: IO[str] | None = None) -> None:
    """One line (or several, where the text holds line breaks) of spans."""
    stream = stream or sys.stdout
    stream.write(render(spans, styled(stream)) + "\n")


def table(header: Sequence[str], rows: Sequence[Sequence[str]], wrap: int,
          stream: IO[str] | None = None) -> None:
    """Columns of cells, column `wrap` wrapped to what the stream's width leaves it."""
    stream = stream or sys.stdout
    escapes = styled(stream)
    widths = [max(len(cell) for cell in [name, *(row[i] for row in rows)]) for i, name in enumerate(header)]
    others = sum(w + 2 for i, w in enumerate(widths) if i != wrap)
    widths[wrap] = max(NARROWEST, min(widths[wrap], width(stream) - others - 2))
    lines = [render([(" " + "  ".join(name.ljust(w) for name, w in zip(header, widths)) + " ", "bold")], escapes)]
    for row in rows:
        cells = [textwrap.wrap(cell, widths[i], break_on_hyphens=False) or [""] if i == wrap else [cell]
                 for i, cell in enumerate(row)]
        for k in range(max(len(c) for c in cells)):
            lines.append(" " + "  ".join((c[k] if k < len(c) else "").ljust(w) for c, w in zip(cells, widths)) + " ")
    stream.write("\n".join(lines) + "\n")
