"""The lab's pages (/lab and /lab/EXHIBIT, each with its .json twin): the exhibits of
glassrag/lab/ computed on the index the page names, with the geometry of their plots.

A LabBench (glassrag/lab/base.py) is kept per index generation in the server process, so a
page that changes one setting re-uses every stage output and grid cell computed before.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Mapping

from glassrag.errors import GlassragError
from glassrag.evaluate.golden import Question
from glassrag.lab import EXHIBITS, losses
from glassrag.lab.base import LabBench
from glassrag.web.catalog import NotFound, Source
from glassrag.web.documents import clean_cut, viewer
from glassrag.web.lab_plots import heat_cells, label_places, line_plot, scatter
from glassrag.web.plots import signed_bars

_lock = threading.Lock()
_benches: dict[tuple[str, str], LabBench] = {}


def bench_of(source: Source) -> LabBench:
    """The LabBench of the source's live generation (made once; an older generation's is dropped)."""
    index = source.index()
    key = (str(source.path), source.generation)
    with _lock:
        found = _benches.get(key)
        if found is not None and found.index is index:
            return found
        for old in [k for k in _benches if k[0] == key[0]]:
            del _benches[old]
    questions, golden = _questions(source)
    made = LabBench(source.name, index, tuple(questions), golden, source.folder)
    with _lock:
        _benches[key] = made
    return made


def changes_costly(source: Source, name: str, params: Mapping[str, str]) -> bool:
    """Whether an exhibit's `params` change its costly settings (Exhibit.costly) from the
    index's own: each such set evaluates a split, which a link (GET) cannot start without the
    token. The index's own settings stay linkable: computed once per generation and process."""
    exhibit = EXHIBITS.get(name)
    if exhibit is None or exhibit.costly is None:
        return False
    bench = bench_of(source)
    return bool(exhibit.costly(bench, params) != exhibit.costly(bench, {}))


def _questions(source: Source) -> tuple[list[Question], str]:
    """The index's labelled questions: its golden JSONL file, else the BEIR folder it was
    built from (its queries and qrels)."""
    golden = source.golden()
    if golden is not None:
        return list(golden.questions), str(golden.path)
    from glassrag.evaluate.beir import load_beir_questions

    for corpus in source.index().sources:
        folder = Path(corpus).parent
        if (folder / "queries.jsonl").is_file() and (folder / "qrels").is_dir():
            try:
                return load_beir_questions(folder, "all"), str(folder)
            except GlassragError:
                continue
    return [], ""


def exhibit_data(source: Source, name: str, params: Mapping[str, str], record: bool = False) -> dict[str, Any]:
    """One exhibit's data on this source, with what its page draws; `record` (a POST): the
    losses exhibit also keeps the run among the user's runs."""
    if name not in EXHIBITS:
        raise NotFound(f"no exhibit {name!r}", f"the exhibits: {', '.join(EXHIBITS)}")
    bench = bench_of(source)
    data = losses.exhibit(bench, params, record=True) if record else EXHIBITS[name].compute(bench, params)
    draw = DRAWINGS.get(name)
    return {"index": source.name, "exhibit": name, "title": EXHIBITS[name].title,
            "golden": bench.golden, **data, **({"plots": draw(data)} if draw else {})}


def overview(source: Source) -> dict[str, Any]:
    bench = bench_of(source)
    splits: dict[str, int] = {}
    for q in bench.questions:
        splits[q.split] = splits.get(q.split, 0) + 1
    return {"index": source.name, "golden": bench.golden, "questions": len(bench.questions), "splits": splits,
            "chunks": len(bench.index.chunks), "documents": len(bench.index.documents),
            "exhibits": [{"name": n, "number": e.number, "title": e.title, "summary": e.summary,
                          "page": f"/lab/{n}?index={source.name}"} for n, e in EXHIBITS.items()]}


# drawings -----------------------------------------------------------------------------------

def _cuts(data: dict[str, Any]) -> dict[str, Any]:
    curve = data["curve"]
    series = [{"name": "measured", "points": [(p["size"], p["intact"]) for p in curve if p["intact"] is not None]},
              {"name": "closed form", "points": [(p["size"], p["predicted_intact"]) for p in curve
                                                 if p["predicted_intact"] is not None]}]
    doc = data["document"]
    rows = [{**c, "words": c["units"], "clean_end": clean_cut(doc["text"], c["end"])} for c in doc["chunks"]]
    return {"intact": line_plot(series, f"size ({data['settings']['unit']})", "answer intact",
                                mark=data["settings"]["size"]),
            "viewer": viewer(doc["text"], rows)}


def _bm25(data: dict[str, Any]) -> dict[str, Any]:
    return {"heat": heat_cells(data["grid"], data["k1"], data["b"])}


def _lsa(data: dict[str, Any]) -> dict[str, Any]:
    share = data["variance"]["share"]
    top = max(share) if share else 1.0
    bars = [{"x": 40 + i * 14, "h": 120 * v / top, "y": 130 - 120 * v / top, "label": f"dimension {i + 1}: {v:.4f}"}
            for i, v in enumerate(share)]
    pair = data["pair"]
    marks = [{"x": pair[k]["x"], "y": pair[k]["y"], "label": pair[k]["text"], "class": f"pair pair-{k}"}
             for k in ("a", "b")]
    # the folded-in texts are drawn on the chunks' map only (words live on another scale)
    shown = data["points"] + (marks if data["view"] == "chunks" else [])
    drawn = scatter(shown)
    if drawn:  # the folded-in texts' labels placed apart (lab_plots.label_places)
        dots = [p for p in drawn["points"] if not p["class"].startswith("pair")]
        drawn = {**drawn, "points": dots + label_places([p for p in drawn["points"] if p["class"].startswith("pair")])}
    return {"variance": {"bars": bars, "width": 40 + 14 * len(share) + 10, "height": 150}, "map": drawn}


def _rerank(data: dict[str, Any]) -> dict[str, Any]:
    model = data["model"]
    return {"weights": [{"name": n, "weight": w, "bar": b}
                        for n, w, b in zip(model["features"], model["weights"], signed_bars(model["weights"]))]}


DRAWINGS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"cuts": _cuts, "bm25": _bm25, "lsa": _lsa,
                                                                    "rerank": _rerank}
