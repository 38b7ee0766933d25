"""The gate on every corpus with unanswerable questions: how well its signals separate, what
each rule costs in answers, and the measurement behind the default cost (M12).

    python bench/gate.py                 # demo handbook, SciFact with abstention, real documents
    python bench/gate.py --neural        # also the demo and SciFact-abstain with MiniLM fused

SciFact with abstention is built here from ../shared/bench/scifact: for a fixed random half
(seed 0) of the train queries and of the test queries, their relevant documents are removed
from the corpus, so those queries become on-topic unanswerable ones (a kept query that loses
every relevant document with them becomes unanswerable too). The folder is written to
bench/out/scifact-abstain/ in BEIR layout, with the removed queries' qrels kept at grade 0.

For each corpus: the index with glassrag's defaults, the learned reranker trained on the
train split, then

1. M12, the default cost: for each c in COSTS, 5-fold cross-validation inside the train
   split (calibrate on four folds, decline or pass the fifth) gives the share of answerable
   questions declined, of found answers declined, and of unanswerable questions declined;
   the default is the smallest c whose cross-validated share of answerable questions
   declined is at most 5 % on every corpus.
2. Each rule (cost with the default c, balanced, keep95) calibrated on train and evaluated
   once on test: ranking hit@5 before the gate, answer hit@5 after it, both declined
   rates, and the AUROC on test of the score the gate chose.
3. The ceiling of each signal: the largest share of unanswerable questions any threshold
   declines while declining at most 5 % of the found answers, read off each split on its
   own (in-sample: an upper bound on what a threshold chosen there can do, not a
   calibration). On train it says whether a target such as "half the unanswerable
   declined, answer hit@5 kept within 5 %" is supported by the evidence calibration sees.

Results: bench/results/gate.json and gate.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.config import Config
from glassrag.evaluate.beir import load_beir_questions, with_abstention
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.fitting import Fitting
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.workbench import Workbench
from glassrag.provenance import code_version
from glassrag.evaluate.tune import gate_rows, train_reranker
from glassrag.gate.calibrate import auroc, calibrate
from glassrag.gate.score import CV_FOLDS, combined_oof, folds, value
from glassrag.gate.threshold import Gate
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

sys.path.insert(0, os.path.dirname(__file__))
from common import RESULTS, ROOT, SCIFACT, save  # noqa: E402

OUT = ROOT / "bench" / "out"
COSTS = [1.0, 2.0, 3.0, 5.0, 8.0, 10.0, 15.0, 20.0, 30.0, 50.0]
KEEP = 0.95  # the default keeps this share of answerable train questions (cross-validated)


def scifact_abstain(seed: int = 0) -> Path:
    """The SciFact-with-abstention folder (rebuilt only when missing)."""
    return with_abstention(SCIFACT, OUT / "scifact-abstain", seed)


def corpora(neural: bool) -> list[dict[str, Any]]:
    from glassrag.demo import demo_docs, demo_golden

    sf = scifact_abstain()
    out = [
        {"name": "demo handbook", "paths": [demo_docs()], "questions": load_golden(demo_golden())},
        {"name": "SciFact with abstention", "paths": [sf],
         "questions": load_beir_questions(sf, "train") + load_beir_questions(sf, "test")},
    ]
    real = ROOT / "bench" / "real_docs_golden.jsonl"
    out.append({"name": "real documents", "paths": [ROOT / "tests" / "fixtures" / "real" / "docs"],
                "questions": load_golden(real)})
    if neural:
        out += [dict(c, name=c["name"] + " + MiniLM", embedder="minilm") for c in out[:2]]
    return out


def build(corpus: dict[str, Any]) -> Any:
    config = Config()
    if corpus.get("embedder"):
        from glassrag.indexer import with_embedder

        config = with_embedder(config, corpus["embedder"])
    cache = OUT / "embedding-cache"
    index, report = build_index(corpus["paths"], config, cache_dir=cache)
    assert not report.failed, report.failed
    index.extra["reranker"] = train_reranker(index, config, corpus["questions"], corpus["name"])
    return index


def split_signals(index: Any, questions: list, split: str = "train") -> list[dict[str, Any]]:
    """Every question's gate signals in `split`, whether it is answerable and whether the
    ranking found its answer in the top k (one pass with the gate off)."""
    pipeline = Pipeline(index, replace(index.config, gate=replace(index.config.gate, enabled=False)))
    chosen = [q for q in questions if q.split == split]
    return [{"answerable": q.answerable, "found": found, "signals": got}
            for q, _, got, found in gate_rows(pipeline, chosen, Judge(index.chunks))]


def ceiling(rows: list[dict[str, Any]], lose: float = 1 - KEEP) -> dict[str, float]:
    """Per signal (and the out-of-fold combination): the largest share of unanswerable
    questions declined by any threshold that declines at most `lose` of the found answers.
    A question that matched nothing is declined at every threshold."""
    pos = [r["signals"] for r in rows if r["found"]]
    neg = [r["signals"] for r in rows if not r["answerable"]]
    unmatched = sum(1 for s in neg if s is None)
    neg = [s for s in neg if s is not None]
    if not pos or not neg:
        return {}
    names = sorted(set.intersection(*(set(s) for s in pos + neg)))
    scores = {n: ([s[n] for s in pos], [s[n] for s in neg]) for n in names}
    if len(names) > 1 and min(len(pos), len(neg)) >= CV_FOLDS:
        scores["combined (out of fold)"] = combined_oof(pos, neg, names)
    out = {}
    for name, (a, u) in scores.items():
        a, u = np.asarray(a), np.asarray(u)
        cuts = np.unique(np.concatenate([a, u, [np.inf]]))
        ok = [(u < t).sum() for t in cuts if (a < t).mean() <= lose + 1e-12]
        out[name] = (max(ok, default=0) + unmatched) / (u.size + unmatched)
    return out


def cross_validate(rows: list[dict[str, Any]], cost: float, seed: int = 0) -> dict[str, float]:
    """Shares declined when each fold is gated by a calibration on the other four."""
    fold = folds(len(rows), CV_FOLDS, seed)
    declined = {"answerable": [], "found": [], "unanswerable": []}
    for f in range(CV_FOLDS):
        fit = [r for r, g in zip(rows, fold) if g != f and r["signals"]]
        pos = [r["signals"] for r in fit if r["found"]]
        neg = [r["signals"] for r in fit if not r["answerable"]]
        gate = Gate(calibrate(pos, neg, "cost", cost, "cv"), {})
        for r, g in zip(rows, fold):
            if g != f:
                continue
            d = gate.decide(r["signals"])[0]
            declined["answerable" if r["answerable"] else "unanswerable"].append(d)
            if r["found"]:
                declined["found"].append(d)
    return {k: float(np.mean(v)) if v else float("nan") for k, v in declined.items()}


def workbench(index: Any, questions: list) -> Workbench:
    """The corpus's index with its trained reranker, the gate calibrated on train for each rule."""
    return Workbench(questions, "bench", base=index, fitting=Fitting(reranker="index", gate="config"))


def test_run(bench: Workbench, rule: str, cost: float) -> dict[str, Any]:
    config = bench.base.config.with_overrides(gate={"rule": rule, "cost": cost})
    gate = bench.fitted(config)[0].extra["gate"]
    run = bench.run(config, "test")
    k = run.k
    found = [r.gate_signals for r in run.questions if r.answerable and r.gate_signals
             and r.metric("ranking", f"hit@{k}")]
    neg = [r.gate_signals for r in run.questions if not r.answerable and r.gate_signals]
    score = gate["score"]
    test_auroc = auroc([value(score, s) for s in found], [value(score, s) for s in neg]) if found and neg else None
    m = {**{f"ranking {n}": v["value"] for n, v in run.ranking.metrics.items()},
         **{f"answer {n}": v["value"] for n, v in run.answer.metrics.items()}}
    return {"rule": rule, "cost": cost if rule == "cost" else None,
            "score": score if score["kind"] == "signal" else {"kind": "combined", "names": score["names"]},
            "separable": gate["separable"], "train_auroc": gate["auroc"], "threshold": gate["threshold"],
            "test_auroc": test_auroc, "ranking_hit5": m[f"ranking hit@{k}"], "answer_hit5": m[f"answer hit@{k}"],
            "declined_answerable": m["answer declined_answerable"],
            "declined_unanswerable": m["answer declined_unanswerable"],
            "n_answerable": run.golden["answerable"], "n_unanswerable": run.golden["unanswerable"],
            "signals_test": run.gate["signals"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--neural", action="store_true", help="also the MiniLM-fused indexes")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    results: dict[str, Any] = {"corpora": {}}
    built = {}
    for corpus in corpora(args.neural):
        print(f"== {corpus['name']}", flush=True)
        index = build(corpus)
        rows = split_signals(index, corpus["questions"])
        cv = {str(c): cross_validate(rows, c) for c in COSTS}
        built[corpus["name"]] = (index, corpus["questions"])
        results["corpora"][corpus["name"]] = {
            "train": {"answerable": sum(r["answerable"] for r in rows), "found": sum(r["found"] for r in rows),
                      "unanswerable": sum(not r["answerable"] for r in rows)},
            "cv": cv,
            "ceiling": {"train": ceiling(rows), "test": ceiling(split_signals(index, corpus["questions"], "test"))}}
        for c in COSTS:
            v = cv[str(c)]
            print(f"  c {c:>4g}: CV declined answerable {v['answerable']:.3f}, found {v['found']:.3f}, "
                  f"unanswerable {v['unanswerable']:.3f}")
    ok = [c for c in COSTS if all(r["cv"][str(c)]["answerable"] <= 1 - KEEP for r in results["corpora"].values())]
    default = min(ok) if ok else max(COSTS)
    results["default_cost"] = default
    print(f"default cost: {default} (smallest c with CV declined answerable ≤ {1 - KEEP:.0%} on every corpus)")
    for name, (index, questions) in built.items():
        bench = workbench(index, questions)
        rules = [test_run(bench, "cost", default), test_run(bench, "balanced", 1.0), test_run(bench, "keep95", default)]
        results["corpora"][name]["test"] = rules
        for r in rules:
            s = r["score"].get("name", "combined")
            print(f"  {name} {r['rule']:8s} score {s:12s} sep {r['separable']!s:5s} train AUROC "
                  f"{r['train_auroc']['auroc']:.3f} test AUROC {r['test_auroc'] if r['test_auroc'] is None else round(r['test_auroc'], 3)}"
                  f" | ranking hit@5 {r['ranking_hit5']:.3f} answer hit@5 {r['answer_hit5']:.3f} "
                  f"declined A {r['declined_answerable']:.3f} U {r['declined_unanswerable']:.3f}")
    import importlib.metadata as md

    results.update({"code_version": code_version(), "machine": platform.platform(),
                    "versions": {p: md.version(p) for p in ("numpy", "scipy")}, "seeds": {"abstain": 0, "cv": 0}})
    save("gate", results)
    write_markdown(results)


def write_markdown(results: dict[str, Any]) -> None:
    lines = ["# The gate on every corpus (bench/gate.py)", "",
             f"Default cost: **{results['default_cost']:g}** (the smallest c whose 5-fold cross-validated "
             f"share of answerable train questions declined is at most {1 - KEEP:.0%} on every corpus).", "",
             "## M12: cross-validated on the train split", "",
             "| corpus | c | declined answerable | declined found answers | declined unanswerable |",
             "|---|---|---|---|---|"]
    for name, r in results["corpora"].items():
        for c, v in r["cv"].items():
            lines.append(f"| {name} | {float(c):g} | {v['answerable']:.3f} | {v['found']:.3f} | {v['unanswerable']:.3f} |")
    lines += ["", "## Test split, each rule calibrated on train", "",
              "| corpus | rule | gate score | separable | AUROC train [95%] | AUROC test | ranking hit@5 | "
              "answer hit@5 | declined answerable | declined unanswerable |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results["corpora"].items():
        for t in r.get("test", []):
            a = t["train_auroc"]
            rule = f"cost (c = {t['cost']:g})" if t["rule"] == "cost" else t["rule"]
            score = t["score"].get("name", "combined")
            test_auroc = "—" if t["test_auroc"] is None else f"{t['test_auroc']:.3f}"
            lines.append(f"| {name} | {rule} | {score} | {'yes' if t['separable'] else 'no'} | "
                         f"{a['auroc']:.3f} [{a['low']:.2f}, {a['high']:.2f}] | {test_auroc} | "
                         f"{t['ranking_hit5']:.3f} | {t['answer_hit5']:.3f} | {t['declined_answerable']:.3f} | "
                         f"{t['declined_unanswerable']:.3f} |")
    lines += ["", f"## The ceiling: unanswerable declined at most, with at most {1 - KEEP:.0%} of found answers declined", "",
              "Each split read on its own (in-sample): no threshold chosen on that split can do better. "
              "Test is shown to compare, not to choose.", "",
              "| corpus | signal | train | test |", "|---|---|---|---|"]
    for name, r in results["corpora"].items():
        train, test = r["ceiling"]["train"], r["ceiling"]["test"]
        for signal in sorted(train, key=lambda n: (-train[n], n)):
            other = "—" if signal not in test else f"{test[signal]:.3f}"
            lines.append(f"| {name} | {signal} | {train[signal]:.3f} | {other} |")
    (RESULTS / "gate.md").write_text("\n".join(lines) + "\n")

if __name__ == "__main__":
    main()
