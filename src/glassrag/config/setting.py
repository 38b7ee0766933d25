"""One setting's definition: `setting()` declares it as a field of its section (sections.py)
with its doc, the source of its default, its range or choices and what changing it means;
`Setting` is that definition read back, and checks, parses and describes a value against it.
TOML files, command-line flags and the web form all check through `Setting`."""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any

from glassrag.errors import ConfigError


def setting(default: Any, doc: str, source: str, *, low: float | None = None, high: float | None = None,
            above: bool = False, choices: tuple[str, ...] | str | None = None,
            reingest: bool = False, scores: bool = False, user_only: bool = False, before: Any = None) -> Any:
    """A settings field. `low`/`high`: the allowed range of a number (`above`: strictly above
    `low`); `choices`: the allowed names, or "module:TABLE" naming the table of variants they
    are looked up in; `reingest`: the setting is used when the index is built; `scores`: it
    changes a score the gate reads (a calibration made under another value is invalid: the
    gate's list, glassrag/gate/threshold.py, is the settings that say so); `user_only`: it
    names something glassrag contacts (a URL), so it is taken only from the user's own --config
    or flags, never from an index folder or a run file (an index is data, issue 28.1); `before`:
    for a setting added after glassrag had the behaviour it now names, the value that does what
    glassrag did before it existed, when that is not its default (a measurement recorded without
    the setting ran with that value: experiment/drift.py)."""
    meta = {"doc": doc, "source": source, "low": low, "high": high, "above": above,
            "choices": choices, "reingest": reingest, "scores": scores, "user_only": user_only,
            "before": before}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
              list: "a list of strings"}


@dataclass(frozen=True)
class Setting:
    """One setting's definition, read from its field in the settings dataclasses."""

    section: str
    key: str
    default: Any
    kind: type
    optional: bool  # may be left out (None): the optional numbers that default to off
    doc: str
    source: str
    low: float | None
    high: float | None
    above: bool
    choices_from: tuple[str, ...] | str | None
    reingest: bool
    user_only: bool = False
    scores: bool = False  # changes a score the gate reads: a calibration is valid for its value only
    before: Any = None  # the value that did what glassrag did before the setting existed (None: its default)

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    def choices(self) -> tuple[str, ...] | None:
        """The allowed names, read from the table of variants when the definition names one."""
        if self.choices_from is None or isinstance(self.choices_from, tuple):
            return self.choices_from
        module, table = self.choices_from.split(":")
        return tuple(getattr(importlib.import_module(module), table))

    def allowed(self) -> str:
        """What the setting takes, in words: "an integer ≥ 1", "one of: a, b"."""
        choices = self.choices()
        if choices is not None:
            return "one of: " + ", ".join(choices)
        text = KIND_NAMES[self.kind]
        if self.kind in (int, float) and (self.low is not None or self.high is not None):
            text += " " + self.range_text()
        if self.optional:
            text += ", or left out (off)"
        return text

    def range_text(self) -> str:
        low, high = _num(self.low), _num(self.high)
        if self.low is not None and self.high is not None and not self.above:
            return f"from {low} to {high}"
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.above else '≥'} {low}")
        if self.high is not None:
            parts.append(f"≤ {high}")
        return " and ".join(parts)

    def check(self, value: Any, origin: str) -> Any:
        """`value` typed (an int where a float is expected becomes a float), or ConfigError
        naming the setting, the value, where it was given and what is allowed."""
        given = value

        def fail(what: str) -> ConfigError:
            return ConfigError(f"{self.name} = {toml_text(given)} in {origin}: must be {what}",
                               f"the default is {toml_text(self.default)}")

        if value is None and self.optional:
            return None
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.kind is bool and not isinstance(value, bool):
            raise fail("true or false")
        if self.kind is int and not (isinstance(value, int) and not isinstance(value, bool)):
            raise fail(self.allowed())
        if self.kind is float:
            if not number:
                raise fail(self.allowed())
            value = float(value)
        if self.kind is str and not isinstance(value, str):
            raise fail(self.allowed())
        if self.kind is list and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise fail("a list of strings")
        if self.kind in (int, float):
            if not math.isfinite(value) or (self.low is not None and (
                    value < self.low or (self.above and value == self.low))) or (
                    self.high is not None and value > self.high):
                raise fail(self.allowed())
        choices = self.choices()
        if choices is not None and value not in choices:
            raise fail(self.allowed())
        return value

    def parse(self, text: str, origin: str) -> Any:
        """A value written as text (a command-line flag, a web form field), checked."""
        raw = text.strip()
        if self.optional and raw.lower() in ("", "off", "none"):
            return None
        value: Any = raw
        if self.kind is bool:
            words = {"true": True, "on": True, "yes": True, "1": True,
                     "false": False, "off": False, "no": False, "0": False}
            value = words.get(raw.lower(), raw)
        elif self.kind is int:
            try:
                value = int(raw)
            except ValueError:
                pass
        elif self.kind is float:
            try:
                value = float(raw)
            except ValueError:
                pass
        elif self.kind is list:
            value = [part.strip() for part in raw.split(",") if part.strip()]
        elif len(raw) > 200 and self.choices() is None:
            raise ConfigError(f"{self.name} in {origin} is {len(raw)} characters long", "give at most 200")
        return self.check(value, origin)

    def argtype(self, flag: str) -> Any:
        """An argparse `type` for a flag that sets this setting: argparse turns the error into
        its usage message and exit code 2."""
        import argparse

        def parse(text: str) -> Any:
            try:
                return self.parse(text, flag)
            except ConfigError as e:
                raise argparse.ArgumentTypeError(
                    f"{text!r}: {self.name} must be {self.allowed()} (the default is {toml_text(self.default)})"
                ) from e

        parse.__name__ = self.name  # argparse names the type in its message
        return parse

    def help(self, extra: str = "") -> str:
        """Help text for a flag: the doc, what it takes and where it is set in a file. A `%` is
        doubled: argparse fills its help in as a %-format (gate.rule's "95 % of" crashed
        `glassrag calibrate --help`)."""
        return (f"{self.doc}; {self.allowed()} (default {toml_text(self.default)}; "
                f"[{self.section}] {self.key} in a --config file){extra}").replace("%", "%%")


def _num(x: float | None) -> str:
    """1 → "1", 0.5 → "0.5", 1e6 → "1_000_000" (as TOML may write it)."""
    if x is None:
        return ""
    if isinstance(x, float) and not x.is_integer():
        return f"{x:g}"
    return f"{int(x):_}" if abs(x) >= 10_000 else str(int(x))


def toml_text(value: Any) -> str:
    """A value as TOML writes it: true, 1.5, "heading", ["bm25"]; None as (off)."""
    if value is None:
        return "(off)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if value != value else
                                                          "inf" if value > 0 else "-inf")
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"')[:80] + '"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    return repr(value)[:80]
