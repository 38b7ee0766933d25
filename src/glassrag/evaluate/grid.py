"""The configurations a sweep evaluates: a grid (every combination of some settings'
values) or a list of configurations, from a TOML file or `--set` flags, every value
checked by its setting's one definition in config/.

    --set bm25.k1=0.6,0.9,1.2 --set bm25.b=0.3,0.4,0.75     a 3 × 3 grid

A list-valued setting (retrieve.retrievers) separates its alternatives with `;`:
`--set "retrieve.retrievers=bm25;bm25,lsa"`. In a TOML file:

    [grid.bm25]                 # every combination, as with --set
    k1 = [0.6, 0.9, 1.2]
    b = [0.3, 0.4, 0.75]

    [[configs]]                 # and/or a list of configurations, each named
    name = "literature"
    bm25 = { k1 = 0.9, b = 0.4 }
"""

from __future__ import annotations

import itertools
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from glassrag.config import SETTINGS, Config, parse_sections, toml_text
from glassrag.errors import ConfigError

Point = Mapping[str, Any]  # setting name ("bm25.k1") -> value
MAX_POINTS = 10_000


@dataclass(frozen=True)
class Grid:
    """`axes`: each swept setting and its values, in the order given (the grid's points are
    every combination, the first axis varying slowest); `listed`: configurations given one
    by one (name, settings), evaluated before the grid's points."""

    axes: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    listed: tuple[tuple[str, Point], ...] = ()

    def points(self) -> list[tuple[str, Point]]:
        """(name, settings) of every configuration, names unique and usable as file names."""
        out = [(name, dict(point)) for name, point in self.listed]
        if self.axes:
            names = [n for n, _ in self.axes]
            for values in itertools.product(*(v for _, v in self.axes)):
                point = dict(zip(names, values))
                out.append((point_name(point), point))
        return [(f"{i:03d}-{name}" if name else f"{i:03d}", point) for i, (name, point) in enumerate(out, 1)]

    def settings(self) -> list[str]:
        """Every setting some configuration changes."""
        return list(dict.fromkeys([*(n for n, _ in self.axes), *(n for _, p in self.listed for n in p)]))

    def to_dict(self) -> dict[str, Any]:
        return {"axes": [{"setting": n, "values": list(v)} for n, v in self.axes],
                "configs": [{"name": n, "settings": dict(p)} for n, p in self.listed]}

    def __len__(self) -> int:
        return len(self.listed) + (math.prod(len(v) for _, v in self.axes) if self.axes else 0)


def point_name(point: Point) -> str:
    """bm25.k1=0.6, bm25.b=0.3 → "k1-0.6_b-0.3" (the setting's key; file-name safe, and a run
    name the web app accepts: web/catalog.RUN_NAME)."""
    parts = [f"{name.split('.', 1)[1]}-{_plain(value)}" for name, value in point.items()]
    return re.sub(r"[^A-Za-z0-9._-]", "", "_".join(parts))[:100]


def _plain(value: Any) -> str:
    if isinstance(value, list):  # ["bm25", "lsa"] → "bm25-lsa" ("+" is no file-name character here)
        return "-".join(map(str, value))
    if value is None:
        return "off"
    return toml_text(value).strip('"')


def setting_of(name: str, origin: str) -> Any:
    """The definition of setting `name`, or ConfigError naming it and listing its section's."""
    s = SETTINGS.get(name)
    if s is None:
        section = name.split(".", 1)[0]
        known = [k for k in SETTINGS if k.startswith(section + ".")]
        raise ConfigError(f"{origin}: unknown setting {name!r}",
                          f"settings in [{section}]: {', '.join(known)}" if known else
                          "glassrag config lists every setting (section.name)")
    return s


def parse_set(text: str) -> tuple[str, tuple[Any, ...]]:
    """`bm25.k1=0.6,0.9` → ("bm25.k1", (0.6, 0.9)), each value checked."""
    origin = f"--set {text}"
    name, sep, values = text.partition("=")
    name = name.strip()
    if not sep or not name or not values.strip():
        raise ConfigError(f"{origin}: expected SECTION.NAME=VALUE,VALUE,…",
                          "e.g. --set bm25.k1=0.6,0.9,1.2")
    s = setting_of(name, origin)
    parts = values.split(";") if s.kind is list else values.split(",")
    if any(not p.strip() for p in parts) and not s.optional:
        raise ConfigError(f"{origin}: an empty value in the list", "separate the values by commas: "
                          + ("a;b" if s.kind is list else "0.6,0.9"))
    return name, _distinct(name, tuple(s.parse(p, origin) for p in parts), origin)


def _distinct(name: str, values: tuple[Any, ...], origin: str) -> tuple[Any, ...]:
    repeated = [v for i, v in enumerate(values) if v in values[:i]]
    if repeated:
        raise ConfigError(f"{origin}: {name} lists {toml_text(repeated[0])} twice")
    return values


def from_flags(texts: Sequence[str]) -> Grid:
    axes = [parse_set(t) for t in texts]
    return Grid(_unique_axes(axes, "--set"))


def _unique_axes(axes: list[tuple[str, tuple[Any, ...]]], origin: str) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    names = [n for n, _ in axes]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise ConfigError(f"{origin}: {twice[0]} is swept twice", "give each setting once, with all its values")
    return tuple(axes)


def from_toml(path: Path) -> Grid:
    """The [grid] and [[configs]] of a TOML file (ConfigError naming the file otherwise)."""
    origin = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such sweep file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read as a TOML sweep file ({err})") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML: {err}") from None
    except RecursionError:  # tomllib recurses once per level of nesting
        raise ConfigError(f"{path}: nested too deep to be a sweep file") from None
    unknown = [k for k in data if k not in ("grid", "configs")]
    if unknown:
        raise ConfigError(f"{path}: unknown table [{unknown[0]}]",
                          "a sweep file has [grid.SECTION] tables of value lists and/or [[configs]]")
    axes = []
    grid = data.get("grid", {})
    if not isinstance(grid, dict):
        raise ConfigError(f"{path}: [grid] must be a table of [grid.SECTION] tables")
    for section, values in grid.items():
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: [grid.{section}] must be a table of settings, each a list of values")
        for key, options in values.items():
            name = f"{section}.{key}"
            s = setting_of(name, origin)
            if not isinstance(options, list) or not options or (s.kind is list and not all(
                    isinstance(o, list) for o in options)):
                raise ConfigError(f"{path}: {name} in [grid] must be a non-empty list of values",
                                  f"e.g. {key} = [{toml_text(s.default)}, …]" if s.kind is not list
                                  else f"e.g. {key} = [[\"bm25\"], [\"bm25\", \"lsa\"]]")
            axes.append((name, _distinct(name, tuple(s.check(o, f"[grid] of {path}") for o in options),
                                         origin)))
    listed = []
    configs = data.get("configs", [])
    if not isinstance(configs, list):
        raise ConfigError(f"{path}: configs must be an array of tables: [[configs]]")
    for i, entry in enumerate(configs, 1):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: configs entry {i} must be a table")
        entry = dict(entry)
        name = entry.pop("name", "")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]{0,60}", name):
            raise ConfigError(f"{path}: configs entry {i}: name must be letters, digits, '.', '_' or '-'")
        sections = parse_sections(entry, f"{path} (configs entry {i})")
        listed.append((name, {f"{s}.{k}": v for s, values in sections.items() for k, v in values.items()}))
    result = Grid(_unique_axes(axes, origin), tuple(listed))
    if not len(result):
        raise ConfigError(f"{path}: no configuration to evaluate", "add a [grid.SECTION] table or [[configs]]")
    return result


def combined(*grids: Grid) -> Grid:
    """The axes and lists of several grids (a file and flags); a setting swept twice is an error."""
    axes = [a for g in grids for a in g.axes]
    grid = Grid(_unique_axes(axes, "the sweep"), tuple(p for g in grids for p in g.listed))
    if not len(grid):
        raise ConfigError("nothing to sweep", "give --set SECTION.NAME=V1,V2,… or a sweep file (--grid FILE)")
    if len(grid) > MAX_POINTS:
        raise ConfigError(f"the sweep has {len(grid):,} configurations; the limit is {MAX_POINTS:,}",
                          "sweep fewer values at once")
    return grid


def configure(base: Config, point: Point) -> Config:
    """`base` with the point's settings set (recorded as coming from the sweep)."""
    data: dict[str, dict[str, Any]] = {}
    for name, value in point.items():
        section, key = name.split(".", 1)
        data.setdefault(section, {})[key] = value
    return base.updated(data, "sweep", "flag")


def distance(point: Point, base: Config) -> tuple[int, float]:
    """How far a point is from `base`: the settings it changes, then the sum of their relative
    changes (|v − d| / max(|d|, 1) for numbers, 1 otherwise). Ties in the sweep's metric go
    to the nearest point, so a grid never moves a default on a tie."""
    changed, size = 0, 0.0
    for name, value in point.items():
        was = base.value(name)
        if value == was:
            continue
        changed += 1
        numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, was))
        size += abs(value - was) / max(abs(was), 1.0) if numbers else 1.0
    return changed, size


def reingest_settings(config: Config) -> dict[str, Any]:
    """The settings an index is built with (what a re-ingest depends on)."""
    return {name: config.value(name) for name, s in SETTINGS.items() if s.reingest}
