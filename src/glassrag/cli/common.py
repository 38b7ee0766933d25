"""What every command shares: the two consoles, the progress bar, number flags and the help
texts of the flags several commands take."""

from __future__ import annotations

import argparse
import importlib
import math
import sys
from typing import TYPE_CHECKING, Any, Callable

from glassrag.cli.terminal import PIPE_WIDTH
from glassrag.errors import redact  # noqa: F401 - the commands import it from here

if TYPE_CHECKING:
    from rich.progress import Progress


class Later:
    """A rich class, or a console, made when first used: rich's import was about 0.07 CPU s of
    every command's process, and `glassrag ask` shows its answer without it (cli/terminal.py).
    Calling it, or reading an attribute (`Text.assemble`, `out.print`), imports rich then."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._made: Any = None

    def _it(self) -> Any:
        """The rich object itself (for a library that checks its type, as Progress does its console)."""
        if self._made is None:
            self._made = self._make()
        return self._made

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._it()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._it(), name)


def rich_class(module: str, name: str) -> Later:
    return Later(lambda: getattr(importlib.import_module(f"rich.{module}"), name))


Table = rich_class("table", "Table")
Text = rich_class("text", "Text")
Console = rich_class("console", "Console")

# a pipe or a log gets wide tables rather than 80 columns of wrapped cells
out = Later(lambda: Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else PIPE_WIDTH))
err = Later(lambda: Console(stderr=True, highlight=False, soft_wrap=True))

INDEX_HELP = ("the index folder (made by glassrag ingest), or with --store an index in PostgreSQL: "
              "postgresql://USER@HOST/DB?schema=NAME")
CONFIG_HELP = ("a TOML settings file; it overrides only the settings it names, over the index's own "
               "(see glassrag config)")
GOLDEN_HELP = "a golden set (JSONL, see docs/golden-format.md) or a BEIR folder"


def progress(label: str) -> Progress:
    """A progress bar on stderr, shown only on a terminal and gone when done (rich.progress is
    imported here: a question needs none, and it cost every `glassrag ask` 0.01 CPU s)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=err._it(), transient=True, disable=not err.is_terminal)


def finite_number(low: float, low_allowed: bool) -> Callable[[str], float]:
    """An argparse type: a finite number above `low` (or equal to it, with `low_allowed`);
    nan and inf are refused, as argparse refuses any bad value: a message and exit 2."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < low or (value == low and not low_allowed):
            raise argparse.ArgumentTypeError(
                f"{text!r} must be a finite number {'≥' if low_allowed else '>'} {low:g}")
        return value

    return parse


class LazyHelp:
    """A flag's help text made when help is shown, not when the parser is built: a setting
    whose choices are a table of variants imports that table's module to list them."""

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make

    def __str__(self) -> str:
        return self.make()

    def strip(self) -> str:  # argparse asks whether the help is blank
        return str(self).strip()

    def __mod__(self, params: object) -> str:  # argparse fills in %(default)s and the like
        return str(self) % params


def setting_help(setting: Any) -> str | LazyHelp:
    """A setting's flag help; made when shown where its choices are a table of variants (listing
    them imports the table's module: gate.rule's imports the gate and scipy.stats)."""
    if isinstance(setting.choices_from, str):
        return LazyHelp(setting.help)
    return setting.help()
