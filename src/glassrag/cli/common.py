"""What every command shares: the two consoles, the progress bar, number flags and the help
texts of the flags several commands take."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console

if TYPE_CHECKING:
    from rich.progress import Progress

# a pipe or a log gets wide tables rather than 80 columns of wrapped cells
out = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 140)
err = Console(stderr=True, highlight=False, soft_wrap=True)

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
                    console=err, transient=True, disable=not err.is_terminal)


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


def redact(text: str) -> str:
    """glassrag.store.pgschema.redact, imported when used: importing glassrag.store loads numpy
    and scipy, which building the parser must not (tests/test_startup.py)."""
    from glassrag.store.pgschema import redact as hide_password

    return hide_password(text)


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
