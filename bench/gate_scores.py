"""Which score should the gate read, from how many passages? `glassrag calibrate`'s own
choices, fitted on each corpus's train split and measured where nobody chose them: the test
split. The evidence behind the defaults `gate.score = combined` and
`gate.answerability_depth = 5`.

    python bench/gate_scores.py                               # six corpora, both modes, depths 3 5 10
    python bench/gate_scores.py --corpus demo --depth 5
    python bench/gate_scores.py --model bundled --model .glassrag/cross-encoder-old
    python bench/gate_scores.py --model bundled --depth 5 --cost 2.5   # writes gate_scores_c2.5.*
    python bench/gate_scores.py --model bundled --depth 5 --cost 2.5 --offtopic-keep 0.98   # gate_scores_c2.5_k0.98.*
    python bench/gate_scores.py --model bundled --depth 5 --cost 2.5 --offtopic-keep 0.98 --rows R \
        --signals base --signals +margin --signals +bm25_top ...     # writes gate_scores_c2.5_k0.98_signals.*

For each corpus of experiments/corpora.toml: the index with glassrag's defaults and the
learned reranker trained on the train split (the experiment log's bench, so indexes are
shared with `glassrag experiment run`), every gate signal of every question and of the
bundled off-topic questions (bench/answerability.py's `signal_rows`), the answerability
model reading the top `depth` passages. Then `gate/calibrate.py`'s `calibrate`, with the
rule cost (c = 5, the cost of the version that chose the score; `--cost` another) and each
kind of unanswerable question weighing as much in total, as `glassrag calibrate` calls it,
once per `gate.score`:

- **combined**: the logistic combination of the answerability model's logit and the four
  shares of the question the passages hold (calibrate.COMBINED), threshold on out-of-fold
  scores (falling back to auto when it cannot separate);
- **auto**: the candidate (one signal, or the combination of all of them) of least train cost.

Reported per corpus on the test split: the share of found answers (answer in the top k) the
gate declines, the shares of the golden set's on-topic unanswerable questions and of the
off-topic ones (the golden set's own and the bundled test half) it declines, and the cost
5 × found declined + 1 − (on-topic + off-topic declined) / 2 (c = 5 whatever `--cost`
calibrated with, so the yardstick stays one), whose mean over the corpora decides; also the
train cost out of fold (5 folds, each fold judged by a calibration fitted on the other four):
the evidence a calibration could use. And the **ceiling**: the share of on-topic unanswerable
test questions below the threshold that keeps 97 % of the found *test* answers (issue 47's
bound), for the calibrated score: what no placing of its threshold could beat on that split.

`--signals` (repeatable) changes what the combination reads (calibrate's `combined`): `base`
is COMBINED, `+NAME[,+NAME]` adds signals to it, a plain comma-separated list replaces it; each
set is calibrated and measured on the same rows (auto only for base).

Results: bench/results/gate_scores.json and gate_scores.md (gate_scores_cC.* for `--cost C`).
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
from glassrag.experiment.corpora import load_corpora, workbench  # noqa: E402
from glassrag.gate.calibrate import COMBINED, SCORES, calibrate, calibrate_offtopic  # noqa: E402
from glassrag.gate.threshold import declines  # noqa: E402
from glassrag.gate.score import CV_FOLDS, folds, score_name, value  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402

CEILING_KEEP = 0.97  # the ceiling's share of found test answers kept (issue 47: at most 0.03 declined)
COST = 5.0  # the yardstick of the test cost, and the calibration cost unless --cost
CORPORA = ["demo", "birds", "economics", "ml-papers", "real", "scifact-abstain"]


def groups(rows: list[dict], split: str) -> tuple[list, list, list]:
    """(found answers' signals, on-topic unanswerable, off-topic) of one split; an
    unanswerable question that matched nothing has None (declined at every threshold)."""
    mine = [r for r in rows if r["split"] == split]
    return ([r["signals"] for r in mine if r["group"] == "found" and r["signals"]],
            [r["signals"] for r in mine if r["group"] == "on-topic"],
            [r["signals"] for r in mine if r["group"] == "off-topic"])


def weighted(on: list, off: list) -> tuple[list, list[float] | None]:
    """The unanswerable questions with signals and their weights (each kind the same total),
    as evaluate/tune.py's calibrate_index weighs them."""
    on, off = [s for s in on if s], [s for s in off if s]
    n = len(on) + len(off)
    if on and off:
        return on + off, [n / (2 * len(on))] * len(on) + [n / (2 * len(off))] * len(off)
    return on + off, None


def declined(cal: dict, signals: list) -> float:
    """The share of `signals` the calibrated gate declines (None: matched nothing, declined;
    a signal the score needs missing: declined), by its first threshold and its second one
    when the calibration has it (gate/threshold.py `declines`)."""
    if not signals:
        return float("nan")
    t = cal["threshold"] if cal["separable"] else None
    out = [s is None or t is not None and value(cal["score"], s) is None or declines(cal, s) for s in signals]
    return float(np.mean(out))


def out_of_fold(mode: str, found: list, un: list, w: list | None, cost: float,
                combined: tuple[str, ...] = COMBINED) -> float:
    """The rule's cost on the train split with every question judged by a calibration
    fitted without its fold."""
    fa, fu = folds(len(found), CV_FOLDS, 0), folds(len(un), CV_FOLDS, 1)
    weights = np.ones(len(un)) if w is None else np.asarray(w)
    kept = dec = 0.0
    for f in range(CV_FOLDS):
        a = [s for s, g in zip(found, fa) if g != f]
        u = [s for s, g in zip(un, fu) if g != f]
        uw = [x for x, g in zip(weights, fu) if g != f] if w is not None else None
        cal = calibrate(a, u, "cost", cost, "fold", uw, mode, combined)
        t = cal["threshold"] if cal["separable"] else None
        if t is None:
            kept += sum(1 for g in fa if g == f)
            continue
        kept += sum(value(cal["score"], s) >= t for s, g in zip(found, fa) if g == f)
        dec += sum(x for s, g, x in zip(un, fu, weights) if g == f and value(cal["score"], s) < t)
    return COST * (1 - kept / len(found)) + (1 - dec / weights.sum())


def ceiling(cal: dict, found: list, on: list, keep: float = CEILING_KEEP) -> float:
    """The share of `on` below the threshold of the calibrated score that keeps `keep` of
    `found` (both of one split): the best any threshold on that score could do there."""
    values = [value(cal["score"], s) for s in found]
    scored = np.sort([v for v in values if v is not None])
    if not scored.size or not on:
        return float("nan")
    t = scored[int(np.floor((1 - keep) * scored.size))]
    return float(np.mean([s is None or (v := value(cal["score"], s)) is None or v < t for s in on]))


def signal_set(spec: str | None) -> tuple[str, ...]:
    """`--signals`: None → COMBINED; "+a,+b" → COMBINED and a, b; "a,b" → a, b."""
    if not spec:
        return COMBINED
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if all(n.startswith("+") for n in names):
        return COMBINED + tuple(n[1:] for n in names)
    return tuple(n.lstrip("+") for n in names)


def measure(rows: list[dict], mode: str, cost: float = COST, keep: float = 1.0,
            combined: tuple[str, ...] = COMBINED) -> dict:
    found, on, off = groups(rows, "train")
    un, w = weighted(on, off)
    t_found, t_on, t_off = groups(rows, "test")
    cal = calibrate(found, un, "cost", cost, "train", w, mode, combined)
    if keep < 1.0:
        cal["offtopic_gate"] = calibrate_offtopic(found, [s for s in off if s], keep, combined)
    out = {"reads": score_name(cal["score"]), "how": cal["how"], "threshold": cal["threshold"],
           "found_declined": declined(cal, t_found), "on_topic_declined": declined(cal, t_on),
           "off_topic_declined": declined(cal, t_off), "train_cost_out_of_fold": out_of_fold(mode, found, un, w, cost, combined),
           "on_topic_ceiling": ceiling(cal, t_found, t_on),
           "train": {"found": len(found), "on-topic": len(on), "off-topic": len(off)},
           "test": {"found": len(t_found), "on-topic": len(t_on), "off-topic": len(t_off)}}
    out["test_cost"] = COST * out["found_declined"] + 1 - (out["on_topic_declined"] + out["off_topic_declined"]) / 2
    return out


def cached_rows(folder: str | None, corpus: str, model: str, depth: int, compute) -> list[dict]:
    """The signal rows of one corpus, model and depth: read from `folder` (--rows) when an
    earlier run saved them there, else computed (and saved there). The rows depend on the
    index and the model, not on the cost or the rule, so calibrations at other settings
    reuse them; delete the folder after changing either."""
    if folder is None:
        return compute()
    path = Path(folder) / f"{corpus}-{Path(model).name}-d{depth}.json"
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    rows = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows), encoding="utf-8")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", action="append", help=f"corpora of experiments/corpora.toml (default: {', '.join(CORPORA)})")
    parser.add_argument("--model", action="append",
                        help="answerability model (gate.answerability: bundled or a folder); repeatable")
    parser.add_argument("--depth", type=int, action="append",
                        help="passages the model reads (gate.answerability_depth); repeatable (default 3, 5, 10)")
    parser.add_argument("--cost", type=float, default=COST,
                        help="the rule's c to calibrate with (default 5; the test cost is judged at c = 5 either way)")
    parser.add_argument("--offtopic-keep", type=float, default=1.0,
                        help="gate.offtopic_keep: the second threshold's share of found answers kept (default 1: none)")
    parser.add_argument("--signals", action="append",
                        help="what the combination reads: +NAME[,+NAME] adds to calibrate.COMBINED, NAME,NAME "
                             "replaces it, base is COMBINED; repeatable (default: base)")
    parser.add_argument("--rows", default=None,
                        help="a folder to keep each corpus's signal rows in and read them back from")
    args = parser.parse_args()
    corpora = load_corpora(LOG)
    work = work_folder(LOG)
    config = Config()
    models = args.model or [config.gate.answerability]
    depths = args.depth or [3, 5, 10]
    specs = args.signals or ["base"]
    sets = {spec: signal_set(None if spec == "base" else spec) for spec in specs}
    results: dict = {"models": models, "depths": depths, "cost": args.cost, "offtopic_keep": args.offtopic_keep,
                     "signals": {spec: list(names) for spec, names in sets.items()}, "runs": []}
    for name in args.corpus or CORPORA:
        corpus = corpora[name]
        if corpus.missing():
            print(f"{name}: skipped, {corpus.missing()}")
            continue
        fitted: list = []  # the index, fitted only when some rows are not kept in --rows

        def index_of(corpus=corpus, fitted=fitted):
            if not fitted:
                fitted.append(workbench(corpus, work).fitted(replace(config, gate=replace(config.gate, enabled=False)))[0])
            return fitted[0]

        for model in models:
            for depth in depths:
                gate = replace(config.gate, answerability=model, answerability_depth=depth)
                rows = cached_rows(args.rows, name, model, depth,
                                   lambda: signal_rows(index_of(), replace(config, gate=gate), corpus.questions(work)))
                for spec, combined in sets.items():
                    for mode in SCORES if spec == "base" else ("combined",):
                        results["runs"].append({"corpus": name, "model": model, "depth": depth, "score": mode,
                                                "signals": spec,
                                                **measure(rows, mode, args.cost, args.offtopic_keep, combined)})
                print(f"{name} · {model} · depth {depth}: measured", flush=True)
    results["provenance"] = provenance({})
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "gate_scores" + ("" if args.cost == COST else f"_c{args.cost:g}") + (
        "" if args.offtopic_keep == 1.0 else f"_k{args.offtopic_keep:g}") + ("" if specs == ["base"] else "_signals")
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    lines = ["# Which score the gate reads, from how many passages (bench/gate_scores.py)", "",
             f"Calibrated on the train split (rule cost, c = {args.cost:g}, each kind of unanswerable question weighing as "
             "much" + (f"; a second threshold keeping {args.offtopic_keep:g} of found answers against off-topic ones"
                       if args.offtopic_keep < 1.0 else "") +
             ") by `glassrag calibrate`'s own code, once per `gate.score` and signal set (base: "
             f"{', '.join(COMBINED)}); shares declined on the test split; "
             "cost = 5 × found declined + 1 − (on-topic + off-topic declined) / 2; ceiling: on-topic declined "
             f"at the test threshold that keeps {CEILING_KEEP:.0%} of found test answers.", "",
             "| model | depth | score | signals | mean test cost | mean found declined | mean on-topic declined | "
             "mean off-topic declined | mean train cost, out of fold | mean on-topic ceiling |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    keys = ("test_cost", "found_declined", "on_topic_declined", "off_topic_declined", "train_cost_out_of_fold",
            "on_topic_ceiling")
    for model in models:
        for depth in depths:
            for spec in specs:
                for mode in SCORES:
                    runs = [r for r in results["runs"]
                            if (r["model"], r["depth"], r["score"], r["signals"]) == (model, depth, mode, spec)]
                    if runs:
                        m = {k: np.nanmean([r[k] for r in runs]) for k in keys}
                        lines.append(f"| {model} | {depth} | {mode} | {spec} | {m['test_cost']:.3f} | "
                                     f"{m['found_declined']:.3f} | {m['on_topic_declined']:.2f} | "
                                     f"{m['off_topic_declined']:.3f} | {m['train_cost_out_of_fold']:.3f} | "
                                     f"{m['on_topic_ceiling']:.2f} |")
    lines += ["", "Per corpus:", "", "| corpus | model | depth | score | signals | reads | found answers declined | "
              "on-topic unanswerable declined | off-topic declined | test cost | train cost, out of fold | "
              "on-topic ceiling |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["runs"]:
        lines.append(f"| {r['corpus']} | {r['model']} | {r['depth']} | {r['score']} | {r['signals']} | {r['reads']} | "
                     f"{r['found_declined']:.3f} | {r['on_topic_declined']:.2f} | {r['off_topic_declined']:.3f} | "
                     f"{r['test_cost']:.3f} | {r['train_cost_out_of_fold']:.3f} | {r['on_topic_ceiling']:.2f} |")
    lines += ["", "Questions (found answers, on-topic unanswerable, off-topic):", ""]
    seen = set()
    for r in results["runs"]:
        if r["corpus"] not in seen:
            seen.add(r["corpus"])
            lines.append(f"- {r['corpus']}: train {r['train']['found']} / {r['train']['on-topic']} / "
                         f"{r['train']['off-topic']}, test {r['test']['found']} / {r['test']['on-topic']} / "
                         f"{r['test']['off-topic']}")
    (RESULTS / f"{stem}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
