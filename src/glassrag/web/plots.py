"""Plot geometry as plain data for inline SVG: the gate's threshold sweep, interval bars
and signed weight bars. Templates draw what these return; nothing is drawn from numbers
typed into a template."""

from __future__ import annotations

import math
from typing import Any, Sequence

SWEEP_W, SWEEP_H = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 52, 190, 16, 40
SERIES = (("answerable_kept", "answerable kept", "kept"),
          ("unanswerable_declined", "unanswerable declined", "declined"),
          ("balanced_accuracy", "balanced accuracy", "balanced"))


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (1, 2 or 5 times a power of ten apart)."""
    if high <= low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / raw)))
    first = math.ceil(low / step) * step
    ticks, t = [], first
    while t <= high + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def sweep_plot(sweep: Sequence[dict[str, float]], threshold: float | None) -> dict[str, Any]:
    """The three shares against the threshold as step lines (a share holds from one
    candidate threshold to the next), with the chosen threshold as a vertical line.

    The first candidate sits one unit below every observed score (it keeps everything);
    it is drawn at the left edge rather than stretching the axis."""
    rows = sorted(sweep, key=lambda r: r["threshold"])
    if not rows:
        return {}
    xs = [r["threshold"] for r in rows]
    low = xs[1] if len(xs) > 2 else xs[0]
    high = xs[-2] if len(xs) > 2 else xs[-1]
    if threshold is not None:
        low, high = min(low, threshold), max(high, threshold)
    pad = (high - low) * 0.04 or 0.5
    low, high = low - pad, high + pad
    inner_w, inner_h = SWEEP_W - LEFT - RIGHT, SWEEP_H - TOP - BOTTOM

    def x(v: float) -> float:
        return LEFT + (min(max(v, low), high) - low) / (high - low) * inner_w

    def y(v: float) -> float:
        return TOP + (1.0 - v) * inner_h

    series = []
    for key, name, css in SERIES:
        d = f"M{x(xs[0]):.1f},{y(rows[0][key]):.1f}"
        for row in rows[1:]:
            d += f" H{x(row['threshold']):.1f} V{y(row[key]):.1f}"
        d += f" H{LEFT + inner_w:.1f}"
        series.append({"key": key, "name": name, "class": css, "d": d,
                       "end_y": y(rows[-1][key])})
    chosen = None
    if threshold is not None:
        at = max((r for r in rows if r["threshold"] <= threshold), key=lambda r: r["threshold"], default=rows[0])
        chosen = {"x": x(threshold), "value": threshold,
                  "points": [{"class": css, "y": y(at[key]), "value": at[key]} for key, _, css in SERIES]}
    legend = [{"name": name, "class": css, "y": TOP + 14 + 20 * i} for i, (_, name, css) in enumerate(SERIES)]
    return {"width": SWEEP_W, "height": SWEEP_H, "left": LEFT, "top": TOP, "right": LEFT + inner_w,
            "bottom": TOP + inner_h, "legend_x": LEFT + inner_w + 14, "legend": legend,
            "series": series, "chosen": chosen,
            "x_ticks": [{"x": x(t), "label": f"{t:g}"} for t in nice_ticks(low, high) if low <= t <= high],
            "y_ticks": [{"y": y(v), "label": f"{v:g}"} for v in (0.0, 0.25, 0.5, 0.75, 1.0)]}


def interval_bar(cell: dict[str, Any], width: float = 90.0) -> dict[str, float] | None:
    """A value and its interval on a 0-1 scale, or None when they are not shares."""
    value, low, high = cell.get("value"), cell.get("low"), cell.get("high")
    if value is None or low is None or high is None or not (0.0 <= low <= value <= high <= 1.0):
        return None
    return {"width": width, "x": value * width, "x1": low * width, "x2": high * width}


def signed_bars(values: Sequence[float], half: float = 90.0) -> list[dict[str, float]]:
    """Bars from a zero line for signed values, scaled to the largest magnitude."""
    top = max((abs(v) for v in values), default=0.0) or 1.0
    bars = []
    for v in values:
        length = abs(v) / top * half
        bars.append({"x": half if v >= 0 else half - length, "width": length, "zero": half,
                     "positive": v >= 0})
    return bars


HEAT_CELL_W, HEAT_CELL_H = 78, 34
HEAT_LEFT, HEAT_TOP, HEAT_BOTTOM = 118, 54, 12
HEAT_SHADES = 8  # CSS classes heat-0 (lowest) … heat-7 (highest): no inline style under the CSP


def heat_map(rows: tuple[str, Sequence[Any]], columns: tuple[str, Sequence[Any]],
             values: dict[tuple[int, int], float | None], best: tuple[int, int] | None,
             higher_is_better: bool = True) -> dict[str, Any]:
    """A grid of cells, one per (row value, column value), each shaded by its value between
    the grid's lowest and highest (eight shades, darker is better) and labelled with it; the
    best cell outlined. `values[(i, j)]`: the value at row i, column j (None: not evaluated)."""
    (row_name, row_values), (col_name, col_values) = rows, columns
    known = [v for v in values.values() if v is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    cells = []
    for i in range(len(row_values)):
        for j in range(len(col_values)):
            v = values.get((i, j))
            if v is None:
                shade = None
            else:
                share = (v - low) / (high - low) if high > low else 1.0
                share = share if higher_is_better else 1.0 - share
                shade = min(int(share * HEAT_SHADES), HEAT_SHADES - 1)
            x, y = HEAT_LEFT + j * HEAT_CELL_W, HEAT_TOP + i * HEAT_CELL_H
            cells.append({"x": x, "y": y, "w": HEAT_CELL_W, "h": HEAT_CELL_H, "value": v,
                          "shade": "heat-none" if shade is None else f"heat-{shade}",
                          "dark": shade is not None and shade >= HEAT_SHADES // 2,
                          "label": "—" if v is None else f"{v:.3f}",
                          "cx": x + HEAT_CELL_W / 2, "cy": y + HEAT_CELL_H / 2 + 4,
                          "row": _label(row_values[i]), "column": _label(col_values[j]),
                          "best": best == (i, j)})
    width = HEAT_LEFT + len(col_values) * HEAT_CELL_W + 8
    height = HEAT_TOP + len(row_values) * HEAT_CELL_H + HEAT_BOTTOM
    return {"width": width, "height": height, "cells": cells, "row_name": row_name, "column_name": col_name,
            "row_labels": [{"x": HEAT_LEFT - 8, "y": HEAT_TOP + i * HEAT_CELL_H + HEAT_CELL_H / 2 + 4,
                            "label": _label(v)} for i, v in enumerate(row_values)],
            "column_labels": [{"x": HEAT_LEFT + j * HEAT_CELL_W + HEAT_CELL_W / 2, "y": HEAT_TOP - 8,
                               "label": _label(v)} for j, v in enumerate(col_values)],
            "row_title": {"x": 8, "y": HEAT_TOP - 8}, "column_title": {"x": HEAT_LEFT, "y": 16},
            "low": low, "high": high}


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "+".join(map(str, value))
    return "off" if value is None else str(value)
