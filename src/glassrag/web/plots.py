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
