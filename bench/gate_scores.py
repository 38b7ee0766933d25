"""Which score should the gate read? The calibration's own choice against two fixed
combinations, measured where nobody chose them: the test split of each corpus.

    python bench/gate_scores.py                       # demo, birds, economics, ml-papers
    python bench/gate_scores.py --corpus demo --corpus real
    python bench/gate_scores.py --model bundled --model .glassrag/cross-encoder-v2

For each corpus of experiments/corpora.toml: the index with glassrag's defaults and the
learned reranker trained on the train split (the experiment log's bench, so indexes are
shared with `glassrag experiment run`), every gate signal of every question and of the
bundled off-topic questions (bench/answerability.py's `signal_rows`). Then, each fitted on
the train split with the default rule (cost, c = 5) and each kind of unanswerable question
weighing as much in total, as `glassrag calibrate` does:

- **chosen**: what `calibrate` picks (the separating candidate of least cost: one signal,
  or the logistic combination of all of them if it beats every one);
- **model + words**: the logistic combination of `answerability` and the four lexical
  signals (bm25_norm, term_share, coverage, known_share), the signals whose scale is the
  same on every corpus and pipeline, threshold at the least cost of its in-sample scores;
- **model + unseen words**: the combination of `answerability` and `known_share` (the
  share of the question, weighted by IDF, that the index has ever seen): the model's score
  and the one signal that knows a name the documents never mention;
- **all**: the combination of every signal, threshold likewise.

With `--model` (repeatable; `bundled` or a model folder, the `gate.answerability` setting)
every figure is measured once per answerability model, on the same indexes.

Reported per corpus on the test split: the share of found answers (answer in the top k)
the gate declines, and the shares of the golden set's on-topic unanswerable questions and
of the off-topic ones (the golden set's own and the bundled test half) it declines. Also on
the train split, out of fold (5 folds: each fold's threshold, and combination, fitted on
the other four), the cost each would have had: the evidence a calibration could use.

Results: bench/results/gate_scores.json and gate_scores.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.answerability import LOG, signal_rows  # noqa: E402
from bench.common import RESULTS  # noqa: E402
from glassrag.config import Config  # noqa: E402
from glassrag.experiment import work_folder  # noqa: E402
from glassrag.experiment.corpora import Bench, load_corpora  # noqa: E402
from glassrag.gate.calibrate import calibrate, choose, sweep  # noqa: E402
from glassrag.gate.score import CV_FOLDS, fit_combined, folds, value  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402

COST = 5.0
WORDS = ["answerability", "bm25_norm", "term_share", "coverage", "known_share"]
FIXED = {"model + words": WORDS, "model + unseen words": ["answerability", "known_share"]}
SCORES = ("chosen", "model + words", "model + unseen words", "all")


def groups(rows: list[dict], split: str) -> tuple[list, list, list]:
    """(found answers' signals, on-topic unanswerable, off-topic) of one split; an
    unanswerable question that matched nothing has None (declined at every threshold)."""
    mine = [r for r in rows if r["split"] == split]
    return ([r["signals"] for r in mine if r["group"] == "found" and r["signals"]],
            [r["signals"] for r in mine if r["group"] == "on-topic"],
            [r["signals"] for r in mine if r["group"] == "off-topic"])


def weighted(on: list, off: list) -> tuple[list, list[float] | None]:
    """The unanswerable questions with signals and their weights (each kind the same total)."""
    on, off = [s for s in on if s], [s for s in off if s]
    n = len(on) + len(off)
    if on and off:
        return on + off, [n / (2 * len(on))] * len(on) + [n / (2 * len(off))] * len(off)
    return on + off, None


def threshold(score: dict, found: list, un: list, w: list | None) -> float:
    vals = [value(score, s) for s in found], [value(score, s) for s in un]
    return choose(sweep(*vals, COST, w), "cost", COST)["threshold"]


def fitted(how: str, found: list, un: list, w: list | None) -> tuple[dict, float | None]:
    if how == "chosen":
        g = calibrate(found, un, "cost", COST, "train", w)
        return g["score"], g["threshold"]
    names = FIXED.get(how) or sorted(set.intersection(*(set(s) for s in [*found, *un])))
    score = fit_combined(found, un, names, w)
    return score, threshold(score, found, un, w)


def declined(score: dict, t: float | None, signals: list) -> float:
    if not signals:
        return float("nan")
    out = [s is None or t is not None and (value(score, s) is None or value(score, s) < t) for s in signals]
    return float(np.mean(out))


def out_of_fold(how: str, found: list, un: list, w: list | None) -> float:
    """The rule's cost on the train split with every question judged by a gate fitted
    without its fold."""
    fa, fu = folds(len(found), CV_FOLDS, 0), folds(len(un), CV_FOLDS, 1)
    weights = np.ones(len(un)) if w is None else np.asarray(w)
    kept = dec = 0.0
    for f in range(CV_FOLDS):
        a = [s for s, g in zip(found, fa) if g != f]
        u = [s for s, g in zip(un, fu) if g != f]
        uw = [x for x, g in zip(weights, fu) if g != f]
        score, t = fitted(how, a, u, uw if w is not None else None)
        if t is None:
            kept += sum(1 for g in fa if g == f)
            continue
        kept += sum(value(score, s) >= t for s, g in zip(found, fa) if g == f)
        dec += sum(x for s, g, x in zip(un, fu, weights) if g == f and value(score, s) < t)
    return COST * (1 - kept / len(found)) + (1 - dec / weights.sum())


def measure(rows: list[dict]) -> dict:
    found, on, off = groups(rows, "train")
    un, w = weighted(on, off)
    t_found, t_on, t_off = groups(rows, "test")
    out = {"train": {"found": len(found), "on-topic": len(on), "off-topic": len(off)},
           "test": {"found": len(t_found), "on-topic": len(t_on), "off-topic": len(t_off)}, "scores": {}}
    for how in SCORES:
        score, t = fitted(how, found, un, w)
        out["scores"][how] = {
            "reads": score.get("name") or "combination of " + ", ".join(score["names"]),
            "found_declined": declined(score, t, t_found), "on_topic_declined": declined(score, t, t_on),
            "off_topic_declined": declined(score, t, t_off), "train_cost_out_of_fold": out_of_fold(how, found, un, w)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append",
                        help="corpora of experiments/corpora.toml (default: demo, birds, economics, ml-papers)")
    parser.add_argument("--model", action="append",
                        help="answerability model (gate.answerability: bundled or a folder); repeatable")
    args = parser.parse_args()
    corpora = load_corpora(LOG)
    bench = Bench(work_folder(LOG))
    config = Config()
    models = args.model or [config.gate.answerability]
    results: dict = {"models": models, "corpora": {}}
    for name in args.corpus or ["demo", "birds", "economics", "ml-papers"]:
        corpus = corpora[name]
        if corpus.missing():
            print(f"{name}: skipped, {corpus.missing()}")
            continue
        index = bench.fitted(corpus, replace(config, gate=replace(config.gate, enabled=False)))
        for model in models:
            with_model = replace(config, gate=replace(config.gate, answerability=model))
            key = name if len(models) == 1 else f"{name} · {model}"
            results["corpora"][key] = measure(signal_rows(index, with_model, bench.questions(corpus)))
            print(f"{key}: measured", flush=True)
    results["provenance"] = provenance({})
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "gate_scores.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    lines = ["# Which score the gate reads (bench/gate_scores.py)", "",
             "Fitted on the train split (rule cost, c = 5, each kind of unanswerable question weighing as "
             "much); shares declined on the test split; the train cost out of fold (5 folds) is what a "
             "calibration could have seen.", "",
             "| corpus | score | reads | found answers declined | on-topic unanswerable declined | "
             "off-topic declined | train cost, out of fold |", "|---|---|---|---|---|---|---|"]
    for name, r in results["corpora"].items():
        for how, s in r["scores"].items():
            lines.append(f"| {name} | {how} | {s['reads']} | {s['found_declined']:.3f} | "
                         f"{s['on_topic_declined']:.2f} | {s['off_topic_declined']:.3f} | "
                         f"{s['train_cost_out_of_fold']:.3f} |")
    lines += ["", "Questions (found answers, on-topic unanswerable, off-topic):", ""]
    for name, r in results["corpora"].items():
        lines.append(f"- {name}: train {r['train']['found']} / {r['train']['on-topic']} / {r['train']['off-topic']}, "
                     f"test {r['test']['found']} / {r['test']['on-topic']} / {r['test']['off-topic']}")
    (RESULTS / "gate_scores.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
