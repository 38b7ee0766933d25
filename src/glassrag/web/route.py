"""The route of one answer as a drawing: every ranking stage of the trace is a column of
its top candidates (rank, chunk, score), and lines join the same chunk from a stage to the
stage that read its list, so a passage's rise and fall can be followed by eye.

This module computes the geometry as plain data (the JSON twin serves it as is); the
template only writes it out as SVG. Nothing here re-runs a stage: ranks and scores are the
trace's.

A column shows its top N hits. Below them, after a gap, it shows the deeper ranks of the
chunks that matter to the picture: the labelled answers, the shown passages, and every
chunk in the top N of a column it is joined to, so a chunk that fell shows where it fell
to. A chunk that a stage did not pass on at all ends in that column's "not passed on" line.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from glassrag.schema import Answer, Hit, StageTrace

NOT_DRAWN = ("analyze", "read", "generate")  # shown in the stage table: they rank nothing
TOP = 8
MORE = 10  # deeper rows per column at most; the rest are counted
COLUMN, GAP, HEADER, ROW, SKIP = 158, 40, 62, 21, 16
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#86bcb6", "#d37295", "#a0cbe8")


@dataclass(frozen=True)
class Label:
    """How a chunk is named in the drawing: a short tag and its whole citation."""

    tag: str
    citation: str
    doc_id: str


TAG_CHARS = 15  # what the tag's clip (COLUMN - 71 px of 10.5 px text) shows whole
TAG_TAIL = 6    # characters kept at the end of a cut id: `-2023` and `-2025` must stay apart


def short_tag(doc_id: str, locator: str) -> str:
    """`§6.2 manual-tx200`: the section number, then the document id, cut in the middle to
    fit TAG_CHARS with its last TAG_TAIL characters kept, so `returns-policy-2023` and
    `-2025` still differ where the column's clip shows them (issue 27: both read `returns…y-20`)."""
    number = re.search(r"§\s*([\dA-Za-z]+(?:\.[\dA-Za-z]+)*)", locator)
    lines = re.search(r"lines?\s+(\d+)", locator)
    prefix = ""
    if number and any(ch.isdigit() for ch in number.group(1)):
        prefix = f"§{number.group(1)} "
    elif lines:
        prefix = f"l.{lines.group(1)} "
    room = max(TAG_CHARS - len(prefix), TAG_TAIL + 3)
    doc = doc_id if len(doc_id) <= room else doc_id[:room - TAG_TAIL - 1] + "…" + doc_id[-TAG_TAIL:]
    return prefix + doc


def colour(doc_id: str) -> str:
    return PALETTE[zlib.crc32(doc_id.encode("utf-8")) % len(PALETTE)]


def columns_of(trace: Iterable[StageTrace]) -> list[StageTrace]:
    """The stages drawn, observed retrievers first (their lines join the retriever beside
    them), then the stages in the order they ran."""
    drawn = [t for t in trace if t.kind not in NOT_DRAWN]
    return [t for t in drawn if t.kind == "observe"] + [t for t in drawn if t.kind != "observe"]


def _drawn_input(stage: StageTrace, columns: list[StageTrace]) -> StageTrace | None:
    """The column a stage's lines come from: its input, or a pass-through stage between them
    that handed on the same list (the gate, when it passed)."""
    by_name = {c.name: c for c in columns}
    source = next((by_name[n] for n in stage.inputs if n in by_name), None)
    if source is None:
        return None
    here, there = columns.index(stage), columns.index(source)
    for between in columns[there + 1: here]:
        if between.inputs == (source.name,) and between.hits and \
                [h.chunk_id for h in between.hits] == [h.chunk_id for h in source.hits]:
            source = between
    return source


def _path(x1: float, y1: float, x2: float, y2: float) -> str:
    mid = (x2 - x1) / 2
    return f"M{x1:.1f},{y1:.1f} C{x1 + mid:.1f},{y1:.1f} {x2 - mid:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"


def layout(answer: Answer, label: Callable[[str], Label], relevant: set[str] | frozenset[str] = frozenset(),
           top: int = TOP) -> dict[str, Any]:
    """The drawing of `answer`'s route as plain data: columns, and per chunk its nodes and lines.
    BM25's per-term line is added to the bm25 column's nodes afterwards (`add_terms`), once the
    nodes drawn are known: only theirs are explained."""
    columns = columns_of(answer.trace)
    answer_id = answer.passage.chunk_id if answer.passage else None
    shown = {p.chunk_id for p in answer.also_found} | ({answer_id} if answer_id else set())
    inputs = {c.name: _drawn_input(c, columns) for c in columns}
    # joined columns: input → stage (solid), and an observed retriever ↔ the column on its right (dashed)
    joins: list[tuple[StageTrace, StageTrace, str]] = []
    for i, c in enumerate(columns):
        source = inputs[c.name]
        if source is not None:
            joins.append((source, c, "solid"))
        if c.kind == "observe" and i + 1 < len(columns) and columns[i + 1].kind in ("retrieve", "observe"):
            joins.append((c, columns[i + 1], "dashed"))
    heads = {c.name: [h.chunk_id for h in c.hits[:top]] for c in columns}
    neighbours: dict[str, set[str]] = {c.name: set() for c in columns}
    for a, b, _ in joins:
        neighbours[a.name].update(heads[b.name])
        neighbours[b.name].update(heads[a.name])

    chunks: dict[str, dict[str, Any]] = {}
    places: dict[tuple[str, str], tuple[float, float]] = {}  # (column, chunk) -> (x, y mid) of its node
    deeper_ends: dict[tuple[str, str], tuple[float, float]] = {}  # chunks counted in "+n more"
    drawn_cols: list[dict[str, Any]] = []
    height = HEADER
    for i, c in enumerate(columns):
        x = 12 + i * (COLUMN + GAP)
        by_id = {h.chunk_id: h for h in c.hits}
        tracked = relevant | shown | neighbours[c.name]
        deeper = sorted((by_id[cid] for cid in tracked if cid in by_id and by_id[cid].rank > top),
                        key=lambda h: h.rank)
        rows: list[tuple[Hit, float, bool]] = [(h, HEADER + n * ROW, False) for n, h in enumerate(c.hits[:top])]
        y = HEADER + min(len(c.hits), top) * ROW
        gap_y = None
        if deeper:
            gap_y = y + SKIP / 2
            y += SKIP
            for h in deeper[:MORE]:
                rows.append((h, y, True))
                y += ROW
        more = None
        if len(deeper) > MORE:
            more = {"y": y + ROW / 2, "label": f"+{len(deeper) - MORE} more, deeper"}
            for h in deeper[MORE:]:
                deeper_ends[(c.name, h.chunk_id)] = (x, y + ROW / 2 - 2)
            y += ROW
        for h, row_y, deep in rows:
            lab = label(h.chunk_id)
            node = {"column": c.name, "col": i + 1, "rank": h.rank, "score": h.score, "x": x, "y": row_y,
                    "tag": lab.tag, "colour": colour(lab.doc_id), "deep": deep,
                    "title": _title(c, h, lab)}
            entry = chunks.setdefault(h.chunk_id, {"chunk_id": h.chunk_id, "doc_id": lab.doc_id,
                                                   "citation": lab.citation, "relevant": h.chunk_id in relevant,
                                                   "answer": h.chunk_id == answer_id, "shown": h.chunk_id in shown,
                                                   "nodes": [], "edges": []})
            entry["nodes"].append(node)
            places[(c.name, h.chunk_id)] = (x, row_y + (ROW - 4) / 2)
        sink = None
        source = inputs[c.name]
        if source is not None:
            lost = len({h.chunk_id for h in source.hits} - set(by_id))
            if lost:
                y += 6
                sink = {"y": y + ROW / 2, "label": _sink_label(c, lost)}
                y += ROW
        banner = next((n for n in c.notes if n.startswith("declined")), None) if c.kind == "gate" else None
        drawn_cols.append({"name": c.name, "kind": c.kind, "x": x, "n_in": c.n_in, "n_out": len(c.hits),
                           "ms": c.ms, "notes": list(c.notes), "note": _short(c.notes[0]) if c.notes else "",
                           "gap_y": gap_y, "more": more, "sink": sink,
                           "banner": banner, "label": c.name + (" · observed" if c.kind == "observe" else "")})
        height = max(height, y)

    sinks = {c["name"]: (c["x"], c["sink"]["y"]) for c in drawn_cols if c["sink"]}
    for a, b, style in joins:
        ids_b = {h.chunk_id for h in b.hits}
        for h in a.hits:
            start = places.get((a.name, h.chunk_id))
            if start is None:
                continue
            x1, y1 = start[0] + COLUMN, start[1]
            end = places.get((b.name, h.chunk_id)) or deeper_ends.get((b.name, h.chunk_id))
            if end is not None:
                kind = style
                x2, y2 = end
            elif style == "solid" and h.chunk_id not in ids_b and h.rank <= top and b.name in sinks:
                kind = "sink"
                x2, y2 = sinks[b.name]
            else:
                continue
            chunks[h.chunk_id]["edges"].append({"from": a.name, "to": b.name, "kind": kind,
                                                "d": _path(x1, y1, x2, y2)})
    width = 12 + len(columns) * (COLUMN + GAP) - GAP + 12
    order = sorted(chunks.values(), key=lambda e: (e["relevant"] or e["answer"], e["shown"]))
    return {"width": width, "height": height + 10, "top": top, "column_width": COLUMN, "row": ROW,
            "columns": drawn_cols, "chunks": order}


def _short(note: str, limit: int = 30) -> str:
    """A column's first note, cut at a word to fit its header (the stage table has it whole)."""
    if len(note) <= limit:
        return note
    cut = note[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(":;,") + "…"


def _sink_label(stage: StageTrace, lost: int) -> str:
    if stage.kind == "gate":
        return f"declined: {lost} not passed on"
    if stage.kind == "select":
        return f"{lost} not shown"
    return f"{lost} not passed on"


def drawn_in(route: dict[str, Any], column: str) -> list[str]:
    """The chunks with a node in `column`, in the drawing's order."""
    return [c["chunk_id"] for c in route["chunks"] if any(n["column"] == column for n in c["nodes"])]


def add_terms(route: dict[str, Any], terms: dict[str, str]) -> None:
    """Each bm25 node's title ends with its chunk's per-term line, where `terms` has one."""
    for chunk in route["chunks"]:
        line = terms.get(chunk["chunk_id"])
        if line:
            for node in chunk["nodes"]:
                if node["column"] in ("bm25", "ray-bm25"):  # ray-bm25: BM25 on a sharded index
                    node["title"] += "\nBM25 per term: " + line


def _title(stage: StageTrace, hit: Hit, lab: Label) -> str:
    lines = [lab.citation, f"{stage.name}: rank {hit.rank}, score {hit.score:.4g}  (chunk {hit.chunk_id[:8]})"]
    for key, value in hit.detail.items():
        if isinstance(value, dict):
            parts = [f"{name} rank {v.get('rank')}, score {v.get('score', 0):.4g}" if isinstance(v, dict)
                     else f"{name} {v}" for name, v in value.items()]
            lines.append(f"{key}: " + "; ".join(parts))
        else:
            lines.append(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")
    return "\n".join(lines)
