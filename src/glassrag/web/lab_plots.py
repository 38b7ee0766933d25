"""Plot geometry of the lab's pages as plain data for inline SVG (no inline style: shades
and series are CSS classes): line plots on a 0–1 scale, the k1 × b heat map, scatter maps."""

from __future__ import annotations

from typing import Any, Sequence

from glassrag.web.plots import heat_map, nice_ticks

LINE_W, LINE_H = 640, 260
LEFT, RIGHT, TOP, BOTTOM = 52, 150, 16, 44
MAP_W, MAP_H, MAP_PAD = 620, 420, 24


def line_plot(series: Sequence[dict[str, Any]], x_title: str, y_title: str, mark: float | None = None,
              y_range: tuple[float, float] = (0.0, 1.0)) -> dict[str, Any]:
    """Each series' (x, y) points joined by a line, on a shared x scale and y in `y_range`;
    `mark`: a vertical line at that x (the current setting)."""
    xs = [x for s in series for x, _ in s["points"]] + ([mark] if mark is not None else [])
    if not xs:
        return {}
    low, high = min(xs), max(xs)
    if high == low:
        low, high = low - 1, high + 1
    ylow, yhigh = y_range
    inner_w, inner_h = LINE_W - LEFT - RIGHT, LINE_H - TOP - BOTTOM

    def x(v: float) -> float:
        return LEFT + (v - low) / (high - low) * inner_w

    def y(v: float) -> float:
        return TOP + (1.0 - (v - ylow) / (yhigh - ylow)) * inner_h

    drawn = []
    for i, s in enumerate(series):
        pts = sorted(s["points"])
        d = " ".join(f"{'M' if j == 0 else 'L'}{x(a):.1f},{y(b):.1f}" for j, (a, b) in enumerate(pts))
        drawn.append({"name": s["name"], "class": f"series-{i}", "d": d,
                      "dots": [{"x": x(a), "y": y(b), "label": f"{s['name']} at {a:g}: {b:.3f}"} for a, b in pts]})
    return {"width": LINE_W, "height": LINE_H, "left": LEFT, "top": TOP, "right": LEFT + inner_w,
            "bottom": TOP + inner_h, "x_title": x_title, "y_title": y_title, "series": drawn,
            "legend": [{"name": s["name"], "class": f"series-{i}", "x": LEFT + inner_w + 14, "y": TOP + 14 + 20 * i}
                       for i, s in enumerate(series)],
            "mark": None if mark is None else {"x": x(mark), "label": f"{mark:g}"},
            "x_ticks": [{"x": x(t), "label": f"{t:g}"} for t in nice_ticks(low, high) if low <= t <= high],
            "y_ticks": [{"y": y(v), "label": f"{v:g}"} for v in nice_ticks(ylow, yhigh)]}


def heat_cells(grid: dict[str, Any], k1: float, b: float) -> dict[str, Any]:
    """The k1 × b heat map (plots.heat_map) with each cell's k1 and b (its link) and the
    cell of the current setting marked."""
    k1s, bs = grid["k1"], grid["b"]
    values = {(k1s.index(c["k1"]), bs.index(c["b"])): c["value"] for c in grid["cells"]}
    best = (k1s.index(grid["best"]["k1"]), bs.index(grid["best"]["b"]))
    heat = heat_map(("k1", k1s), ("b", bs), values, best)
    for cell, (i, j) in zip(heat["cells"], [(i, j) for i in range(len(k1s)) for j in range(len(bs))]):
        cell["k1"], cell["b"] = k1s[i], bs[j]
        cell["current"] = k1s[i] == k1 and bs[j] == b
    return heat


def scatter(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Points {x, y, label, class} scaled into a square-ish map with a margin."""
    if not points:
        return {}
    xs, ys = [p["x"] for p in points], [p["y"] for p in points]
    xl, xh, yl, yh = min(xs), max(xs), min(ys), max(ys)
    xh, yh = (xh if xh > xl else xl + 1), (yh if yh > yl else yl + 1)
    out = []
    for p in points:
        out.append({**p, "cx": MAP_PAD + (p["x"] - xl) / (xh - xl) * (MAP_W - 2 * MAP_PAD),
                    "cy": MAP_H - MAP_PAD - (p["y"] - yl) / (yh - yl) * (MAP_H - 2 * MAP_PAD)})
    return {"width": MAP_W, "height": MAP_H, "points": out}


LABEL_H = 14  # px: the line an 11 px label takes
CHAR_W = 7.0  # px: an 11 px character at most, about (digits and capitals of the sans font)


def label_places(marks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each mark ({cx, cy, label} as `scatter` placed it) with where its label goes: `lx`, `ly`
    and `anchor` (start: right of the ring; end: left of it, when the label would leave the map).
    Two labels whose boxes would cross (E-4107 and E-4170 fold in at almost the same place,
    issue 49, item 7) are pulled apart vertically: the higher one's above its ring, the other's below."""
    placed = []
    for m in marks:
        width = CHAR_W * len(str(m["label"]))
        right = m["cx"] + 10 + width <= MAP_W
        placed.append({**m, "lx": m["cx"] + 10 if right else m["cx"] - 10, "ly": m["cy"] + 4,
                       "anchor": "start" if right else "end", "_w": width})

    def box(p: dict[str, Any]) -> tuple[float, float, float, float]:
        left = p["lx"] if p["anchor"] == "start" else p["lx"] - p["_w"]
        return left, left + p["_w"], p["ly"] - LABEL_H + 3, p["ly"] + 3

    for i, p in enumerate(placed):
        for q in placed[i + 1:]:
            a, b = box(p), box(q)
            if a[0] < b[1] and b[0] < a[1] and a[2] < b[3] and b[2] < a[3]:
                upper, lower = (p, q) if p["cy"] <= q["cy"] else (q, p)
                upper["ly"] = min(upper["cy"] - 9, lower["cy"] - 9 - LABEL_H)
                lower["ly"] = max(lower["cy"] + 4 + LABEL_H, upper["ly"] + LABEL_H + 2)
    return [{k: v for k, v in p.items() if k != "_w"} for p in placed]
