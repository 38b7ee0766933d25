"""The sweeps kept beside an index (INDEX/sweeps/NAME/sweep.json, written by `glassrag
sweep`) as analytics data: each sweep's configurations with the metric that chose among
them, the best, its test result, and a heat map when the grid has two swept settings."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from glassrag.web.plots import heat_map

SHOWN = 5  # the newest sweeps shown
_lock = threading.Lock()
_read: dict[str, tuple[float, dict[str, Any] | None]] = {}


def sweeps(index_folder: Path) -> list[dict[str, Any]]:
    """The newest sweeps of an index, newest first; an unreadable file is listed with why."""
    files = sorted((index_folder / "sweeps").glob("*/sweep.json"),
                   key=lambda p: p.stat().st_mtime, reverse=True)[:SHOWN]
    return [shown(p.parent.name, _load(p)) for p in files]


def _load(path: Path) -> dict[str, Any] | None:
    mtime = path.stat().st_mtime
    with _lock:
        kept = _read.get(str(path))
        if kept and kept[0] == mtime:
            return kept[1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != "glassrag-sweep":
            data = None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        data = None
    with _lock:
        _read[str(path)] = (mtime, data)
    return data


def shown(folder: str, data: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"folder": folder, "file": f"sweeps/{folder}/sweep.json"}
    if data is None:
        return {**out, "problem": "not a glassrag sweep file"}
    try:
        return {**out, **_summary(data)}
    except (KeyError, TypeError, ValueError, IndexError) as e:  # a hand-edited file
        return {**out, "problem": f"cannot be read: {type(e).__name__} {e}"}


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    metric, best = data["metric"], data["best"]["name"]
    configs = data["configs"]
    rows = [{"name": c["name"], "settings": c["settings"], "metric": c.get("metric"), "gate": c.get("gate"),
             "best": c["name"] == best} for c in configs]
    axes = [a for a in data["grid"]["axes"] if len(a["values"]) > 1]
    heat = None
    if len(data["grid"]["axes"]) == 2 and len(axes) == 2:
        (rname, rvalues), (cname, cvalues) = ((a["setting"], a["values"]) for a in data["grid"]["axes"])
        values: dict[tuple[int, int], float | None] = {}
        at = None
        for c in configs:
            s = c["settings"]
            if set(s) != {rname, cname} or s[rname] not in rvalues or s[cname] not in cvalues:
                continue  # a listed configuration, not a grid point
            cell = (rvalues.index(s[rname]), cvalues.index(s[cname]))
            values[cell] = (c.get("metric") or {}).get("value")
            if c["name"] == best:
                at = cell
        heat = heat_map((rname, rvalues), (cname, cvalues), values, at, data.get("better", "higher") == "higher")
    return {"name": data.get("name") or "", "created": data.get("created"), "metric": metric,
            "better": data.get("better", "higher"), "split": data["split"], "golden": data.get("golden", ""),
            "size": len(configs), "best": data["best"], "test": data.get("test"),
            "timing": data.get("timing", {}), "heat": heat, "rows": rows,
            "settings": list(dict.fromkeys(n for c in configs for n in c["settings"]))}
