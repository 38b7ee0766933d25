"""The gate's ceiling before and after the cross-encoder trained here, per kind of
unanswerable question, and the time the model adds to a question.

    python bench/answerability.py                  # demo, SciFact with abstention, real documents
    python bench/answerability.py --corpus demo
    python bench/answerability.py --fp32 .glassrag/cross-encoder   # time the fp32 model too (make cross-encoder writes it)

For each corpus of experiments/corpora.toml: the index with glassrag's defaults and the
learned reranker trained on the train split (the experiment log's bench, so the indexes are
shared with `glassrag experiment run`), then every gate signal of every train and test
question and of the bundled off-topic questions (their train and test halves), with the
answerability model computed whether or not a calibration reads it.

1. The ceiling of each signal: the largest share of unanswerable questions a threshold
   declines while declining at most 5 % of the found answers (answer in the top k), read off
   each split on its own, separately for the golden set's on-topic unanswerable questions
   and the off-topic ones, with each signal's AUROC against each. In-sample: an upper bound
   on what a threshold chosen there can do, not a calibration. "Before the model" is the
   best of the signals without `answerability*`; "after" the best of all.
2. The time the model adds: the demo's test questions, the cross-encoder reading the top
   `pool` passages of the ranking (5, 10, 20), int8 and (with --fp32) fp32, median ms a
   question over the questions, one process, after one warm-up question.

Results: bench/results/answerability.json and answerability.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS  # noqa: E402
from glassrag.config import Config  # noqa: E402
from glassrag.evaluate.offtopic import offtopic_questions  # noqa: E402
from glassrag.evaluate.relevance import Judge  # noqa: E402
from glassrag.evaluate.tune import gate_rows  # noqa: E402
from glassrag.experiment.corpora import load_corpora, workbench  # noqa: E402
from glassrag.experiment import work_folder  # noqa: E402
from glassrag.gate.calibrate import auroc  # noqa: E402
from glassrag.pipeline import ChunkTexts, Pipeline  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402
from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder  # noqa: E402

LOG = ROOT / "experiments"


def signal_rows(index, config: Config, questions) -> list[dict]:
    pipeline = Pipeline(index, replace(config, gate=replace(config.gate, enabled=False)), every_signal=True)
    rows = []
    for q, _, got, found in gate_rows(pipeline, [*questions, *offtopic_questions("all")], Judge(index.chunks)):
        group = "found" if q.answerable and found else "missed" if q.answerable else \
            "off-topic" if q.kind == "off-topic" else "on-topic"
        rows.append({"id": q.id, "split": q.split, "group": group, "signals": got})
    return rows


def ceiling(rows: list[dict], split: str) -> dict:
    """Per signal: AUROC against each kind, and the share of each kind declined at the
    highest threshold that keeps ≥ 95 % of the found answers (a question with no signal,
    which matched nothing, is declined at every threshold)."""
    mine = [r for r in rows if r["split"] == split]
    found = [r for r in mine if r["group"] == "found" and r["signals"]]
    kinds = {k: [r for r in mine if r["group"] == k] for k in ("on-topic", "off-topic")}
    names = sorted(set.intersection(*(set(r["signals"]) for r in found))) if found else []
    table = {}
    for n in names:
        pos = np.sort([r["signals"][n] for r in found])
        t = pos[int(np.floor(0.05 * len(pos)))]
        entry = {}
        for k, group in kinds.items():
            if not group:
                continue
            values = [r["signals"].get(n) if r["signals"] else None for r in group]
            scored = [v for v in values if v is not None]
            entry[k] = {"auroc": auroc(pos, scored) if scored else None,
                        "declined": float(np.mean([v is None or v < t for v in values])), "n": len(group)}
        table[n] = entry
    return {"found": len(found), **{f"n {k}": len(v) for k, v in kinds.items()}, "signals": table}


def best(table: dict, kind: str, model: bool) -> tuple[str, float]:
    cands = [(n, e[kind]["declined"]) for n, e in table["signals"].items()
             if kind in e and (model or not n.startswith("answerability"))]
    return max(cands, key=lambda c: c[1]) if cands else ("", float("nan"))


def latency(index, config: Config, questions, folder: Path, precision: str) -> dict:
    pipeline = Pipeline(index, replace(config, gate=replace(config.gate, enabled=False)))
    texts = ChunkTexts(index)
    ce = OnnxCrossEncoder(folder, precision)
    asked = [q for q in questions if q.split == "test"]
    rankings = [(q.question, [h.chunk_id for h in pipeline.run(q.question).trace[-3].hits]) for q in asked]
    out = {}
    for pool in (5, 10, 20):
        ce.predict([(rankings[0][0], texts[c]) for c in rankings[0][1][:pool]])  # warm-up
        times = []
        for question, ids in rankings:
            t0 = time.perf_counter()
            ce.predict([(question, texts[c]) for c in ids[:pool]])
            times.append(1000 * (time.perf_counter() - t0))
        out[str(pool)] = round(statistics.median(times), 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append", help="corpora of experiments/corpora.toml (default: "
                        "demo, scifact-abstain, real)")
    parser.add_argument("--fp32", type=Path, help="a folder holding the fp32 model.onnx to time beside int8")
    args = parser.parse_args()
    corpora = load_corpora(LOG)
    names = args.corpus or ["demo", "scifact-abstain", "real"]
    work = work_folder(LOG)
    config = Config()
    results: dict = {"corpora": {}, "latency": {}}
    for name in names:
        corpus = corpora[name]
        if corpus.missing():
            print(f"{name}: skipped, {corpus.missing()}")
            continue
        fitted_config = replace(config, gate=replace(config.gate, enabled=False))
        index = workbench(corpus, work).fitted(fitted_config)[0]  # the learned reranker trained, no calibration
        questions = corpus.questions(work)
        rows = signal_rows(index, config, questions)
        results["corpora"][name] = {s: ceiling(rows, s) for s in ("train", "test")}
        print(f"{name}: {len(rows)} questions measured")
        if name == "demo":
            results["latency"]["int8"] = latency(index, config, questions, bundled_folder(), "int8")
            if args.fp32:
                results["latency"]["fp32"] = latency(index, config, questions, args.fp32, "fp32")
    results["provenance"] = provenance({})
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "answerability.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    lines = ["# The gate's ceiling before and after the cross-encoder (bench/answerability.py)", "",
             "Largest share of each kind of unanswerable question a threshold declines while keeping "
             "≥ 95 % of the found answers, read off each split on its own (in-sample ceiling); "
             "before = best signal without the model, after = best of all.", "",
             "| corpus | split | found | on-topic: before | on-topic: after | off-topic: before | off-topic: after |",
             "|---|---|---|---|---|---|---|"]
    for name, splits in results["corpora"].items():
        for split, table in splits.items():
            cells = []
            for kind in ("on-topic", "off-topic"):
                for model in (False, True):
                    n, v = best(table, kind, model)
                    cells.append(f"{v:.2f} ({n})" if n else "—")
            lines.append(f"| {name} | {split} | {table['found']} | " + " | ".join(cells) + " |")
    lines += ["", "Per signal (AUROC against on-topic / off-topic unanswerable; declined at the ceiling):", ""]
    for name, splits in results["corpora"].items():
        for split, table in splits.items():
            lines += [f"**{name}, {split}** ({table['found']} found, {table.get('n on-topic', 0)} on-topic, "
                      f"{table.get('n off-topic', 0)} off-topic)", "",
                      "| signal | AUROC on-topic | declined on-topic | AUROC off-topic | declined off-topic |",
                      "|---|---|---|---|---|"]
            for n, e in table["signals"].items():
                on, off = e.get("on-topic", {}), e.get("off-topic", {})
                fmt = lambda d, k: "—" if d.get(k) is None else f"{d[k]:.3f}" if k == "auroc" else f"{d[k]:.2f}"
                lines.append(f"| {n} | {fmt(on, 'auroc')} | {fmt(on, 'declined')} | {fmt(off, 'auroc')} | "
                             f"{fmt(off, 'declined')} |")
            lines.append("")
    if results["latency"]:
        lines += ["Time the model adds to a question (demo test questions, median ms, the top `pool` "
                  "passages read):", "", "| precision | pool 5 | pool 10 | pool 20 |", "|---|---|---|---|"]
        for p, row in results["latency"].items():
            lines.append(f"| {p} | {row['5']} | {row['10']} | {row['20']} |")
    (RESULTS / "answerability.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:20]))


if __name__ == "__main__":
    main()
