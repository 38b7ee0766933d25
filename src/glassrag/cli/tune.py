"""`glassrag rerank-train` and `glassrag calibrate`: what is fitted on the golden set's
train split (the learned reranker; the gate's and the reader's thresholds) and saved with
the index."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import CONFIG_HELP, GOLDEN_HELP, INDEX_HELP, Table, Text, err, out, progress, redact, setting_help
from glassrag.config import SETTINGS, layered

# a logistic regression wants about ten events (here: relevant candidates) per feature
# (Peduzzi et al. 1996, J Clin Epidemiol 49(12))
EVENTS_PER_FEATURE = 10


def add_parser(sub: Any) -> None:
    p = sub.add_parser("rerank-train", help="train the learned reranker on the golden train split")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP + "; the model is saved in it")
    p.add_argument("--golden", required=True, help=GOLDEN_HELP + " (its train split is used)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.set_defaults(run=cmd_rerank_train)

    p = sub.add_parser("calibrate", help="calibrate the gate and the reader on the golden train split")
    p.add_argument("--index", "--store", dest="index", required=True, help=INDEX_HELP + "; the calibration is saved in it")
    p.add_argument("--golden", required=True, help=GOLDEN_HELP + " (its train split is used)")
    p.add_argument("--config", type=Path, help=CONFIG_HELP)
    p.add_argument("--rule", default=None, type=SETTINGS["gate.rule"].argtype("--rule"),
                   help=setting_help(SETTINGS["gate.rule"]))
    p.add_argument("--cost", default=None, type=SETTINGS["gate.cost"].argtype("--cost"),
                   help=SETTINGS["gate.cost"].help())
    p.set_defaults(run=cmd_calibrate)


def cmd_rerank_train(args: argparse.Namespace) -> int:
    return rerank_train_command(args.index, Path(args.golden), args.config)


def cmd_calibrate(args: argparse.Namespace) -> int:
    return calibrate_command(args.index, Path(args.golden), args.config, args.rule, args.cost)


def _train_questions(location: str, golden: Path, config_file: Path | None) -> tuple[Any, Any, Any, list]:
    from glassrag.evaluate.questions import load_questions
    from glassrag.store import open_store

    store = open_store(location)
    index = store.read()
    config = layered(index.config, config_file, built=True)
    return store, index, config, load_questions(golden, "all", index.documents)


def rerank_train_command(location: str, golden: Path, config_file: Path | None = None) -> int:
    """Trains the learned reranker on the train split of `golden` and saves it in the index."""
    from glassrag.evaluate.tune import train_reranker

    store, index, config, questions = _train_questions(location, golden, config_file)
    with progress("training") as bar:
        task = bar.add_task("train", total=None)
        model = train_reranker(index, config, questions, str(golden),
                               progress=lambda n, t: bar.update(task, completed=n, total=t))
    index.extra["reranker"] = model
    store.write(index)
    table = Table(title=f"learned reranker: {model['rows']} candidates of {model['questions']} train "
                        f"questions, {model['positives']} relevant; L2 {model['l2']}")
    for col in ("feature", "weight (standardised)", "mean", "std"):
        table.add_column(col)
    for name, w, m, sd in zip(model["features"], model["weights"], model["mean"], model["std"]):
        table.add_row(name, f"{w:+.3f}", f"{m:.3g}", f"{sd:.3g}")
    table.add_row("(bias)", f"{model['bias']:+.3f}", "", "")
    out.print(table)
    needed = events_needed(model)
    if model["positives"] < needed:
        err.print(Text.assemble(("warning ", "yellow"), (
            f"the reranker learned from {model['questions']} train questions giving {model['positives']} "
            f"relevant candidates; a logistic regression of {len(model['features'])} features needs about "
            f"{needed} ({EVENTS_PER_FEATURE} per feature, Peduzzi et al. 1996), so its weights may be "
            "mostly noise: label more train questions")))
    print_reranker_decision(model["cv"], config.rerank.method)
    out.print(f"saved in {redact(location)}", markup=False)
    return 0


def events_needed(model: dict[str, Any]) -> int:
    """The relevant candidates a learned reranker needs for its weights not to be mostly noise."""
    return EVENTS_PER_FEATURE * len(model["features"])


def print_reranker_decision(cv: dict[str, Any], method: str) -> None:
    """The cross-validation's figures, what `rerank.method = auto` does with them, and the
    one next step that follows (never two that contradict each other)."""
    from glassrag.rerank.learned_cv import FOLDS

    out.print(f"cross-validation on the train split ({FOLDS} folds by question, each question's pool "
              f"reranked by a model fitted on the other folds): {cv['why']}; "
              f"{cv['improved']} question(s) ranked better, {cv['degraded']} worse", markup=False)
    if cv["helps"]:
        verdict = "rerank.method = auto uses the learned reranker"
        step = ("run glassrag calibrate again: the scores the gate reads change" if method in ("auto", "learned")
                else f"[rerank] method is {method!r} in these settings, so it is not used")
    else:
        verdict = "rerank.method = auto does not use the learned reranker (the ranking stays as it is given)"
        step = ('[rerank] method = "learned" would force it; label more train questions to give it a '
                'chance' if method != "learned" else
                '[rerank] method = "learned" in these settings forces it anyway')
    out.print(f"decision: {verdict}; {step}", markup=False)


def calibrate_command(location: str, golden: Path, config_file: Path | None = None, rule: str | None = None,
              cost: float | None = None) -> int:
    """Calibrates the gate and the reader on the train split of `golden`; saved in the index."""
    from glassrag.evaluate.tune import calibrate_index
    from glassrag.gate.calibrate import MIN_PER_CLASS

    store, index, config, questions = _train_questions(location, golden, config_file)
    time_ms: dict[str, float] = {}
    with progress("calibrating (train split and the bundled off-topic questions)") as bar:
        task = bar.add_task("calibrate", total=None)
        gate, reader = calibrate_index(index, config, questions, rule or config.gate.rule, str(golden),
                                       progress=lambda n, t: bar.update(task, completed=n, total=t),
                                       cost=cost, time_ms=time_ms)
    from glassrag.gate.threshold import kept

    others = kept(index.extra, gate)  # calibrations for other settings stay beside it
    index.extra["gate"] = gate
    index.extra["gates"] = others
    index.extra["reader"] = reader
    store.write(index)
    print_inputs(gate)
    print_calibration(gate)
    print_time(time_ms)
    for warning in gate.get("warnings", []):
        err.print(Text.assemble(("warning ", "yellow"), warning))
    small = min(gate["n_answerable"], gate["n_unanswerable"])
    if small < MIN_PER_CLASS:
        err.print(Text.assemble(("warning ", "yellow"), (
            f"calibrated on {sum(q.split == 'train' for q in questions)} train questions "
            f"({gate['n_answerable']} answerable with their answer found, {gate['n_unanswerable']} "
            f"unanswerable); the gate needs at least {MIN_PER_CLASS} of each to set a threshold, and "
            f"the reader's threshold over {reader['questions']} questions is a guess: label more "
            "train questions")))
    out.print(f"reader: coverage threshold {reader['threshold']:.3g}, train accuracy {reader['accuracy']:.1%} "
              f"over {reader['questions']} questions")
    if reader["threshold"] > 1.0:
        err.print(Text.assemble(("warning ", "yellow"), (
            "the reader's threshold is above any coverage a quote can have, so the reader will never "
            "quote anything (on this train split no threshold quoted more right answers than it "
            "cost): label more answerable train questions, or read the passages themselves")))
    return 0


def print_time(time_ms: dict[str, float]) -> None:
    """What the calibration's pass over the train questions spent its time on, by stage."""
    from glassrag.evaluate.timing import described

    if time_ms:
        out.print(f"time in the stages, every gate signal measured: {described(time_ms)}", markup=False)


def print_inputs(gate: dict[str, Any]) -> None:
    """What the calibration had, before what it chose."""
    q = gate.get("questions", {})
    topics = gate.get("unanswerable_by_topic", {})
    parts = [f"{q.get('found', 0)} answerable train questions whose answer the ranking found "
             f"({q.get('missed', 0)} missed, left out)"]
    for topic, row in topics.items():
        parts.append(f"{row['questions']} unanswerable {topic}")
    if q.get("offtopic"):
        parts.append(f"of which {q['offtopic'] - q.get('no_match_offtopic', 0)} from the bundled "
                     f"off-topic set (gate.offtopic; {q.get('no_match_offtopic', 0)} more matched nothing)")
    out.print("calibrating on " + ", ".join(parts) +
              ("; each kind of unanswerable question weighs as much in total" if gate.get("weighted") else ""),
              markup=False)


def print_offtopic_gate(off: dict[str, Any] | None) -> None:
    """The second threshold (gate.offtopic_keep below 1), or why it is not set."""
    if not off:
        return
    if off["threshold"] is None:
        out.print(f"second threshold, for off-topic questions (gate.offtopic_keep = {off['keep']:g}): not set, "
                  + off["why"], markup=False)
        return
    a = off["auroc"]
    out.print(f"second threshold, for off-topic questions (gate.offtopic_keep = {off['keep']:g}): combined "
              f"({', '.join(off['score']['names'])}) fitted on {off['n_answerable']} found answers against "
              f"{off['n_offtopic']} off-topic train questions, AUROC {a['auroc']:.3f} [{a['low']:.2f}, {a['high']:.2f}]; "
              f"threshold {off['threshold']:.4g} keeps {off['kept']:.1%} of the found answers and declines "
              f"{off['declined']:.1%} of the off-topic ones (out of fold)", markup=False)


def print_calibration(gate: dict[str, Any]) -> None:
    """The signal table, the score chosen and what its threshold does on the train split."""
    from glassrag.gate.score import score_name

    table = Table(title=f"gate signals on the train split ({gate['n_answerable']} answerable questions "
                        f"whose answer is in the top k, {gate['n_unanswerable']} unanswerable): "
                        "AUROC, 95% bootstrap interval; kept, declined and cost at the threshold the rule picks")
    for col in ("signal", "AUROC", "interval", "kept", "declined", "cost", ""):
        table.add_column(col)
    chosen = score_name(gate["score"])
    for r in gate["signals"]:
        name = (f"combined ({', '.join(r.get('names', []))}; logistic regression, out of fold)"
                if r["signal"] == "combined" else r["signal"])
        mark = "← the gate's score" if (r["signal"] == chosen or
                                        (r["signal"] == "combined" and gate["score"]["kind"] == "combined")) else ""
        table.add_row(name, f"{r['auroc']:.3f}", f"[{r['low']:.2f}, {r['high']:.2f}]", f"{r['kept']:.2f}",
                      f"{r['declined']:.2f}", f"{r['objective']:.3f}", mark)
    out.print(table)
    if gate.get("score_mode") == "combined" and gate.get("how") != "combined":
        out.print(f"gate.score = combined fell back to {gate['how']}", markup=False)
    a = gate["auroc"]
    if not gate["separable"]:
        out.print(f"gate: its best score ({chosen}, AUROC {a['auroc']:.2f} [{a['low']:.2f}, {a['high']:.2f}]) "
                  f"cannot tell answerable from unanswerable questions on this corpus ({gate['why']}), "
                  "so the gate will decline nothing but questions that match no passage", markup=False)
        return
    c = gate["chosen"]
    rule = f"rule cost (c = {gate['cost']:g})" if gate["rule"] == "cost" else f"rule {gate['rule']}"
    topics = gate.get("unanswerable_by_topic", {})
    each = "; ".join(f"{t} {row['declined']:.1%}" for t, row in topics.items())
    if gate.get("on_topic_why"):
        out.print(f"gate: the first threshold is fitted against the off-topic questions only: {gate['on_topic_why']}",
                  markup=False)
    out.print(f"gate on {chosen}, {rule}: threshold {gate['threshold']:.4g} keeps "
              f"{c['answerable_kept']:.1%} of the found answers and declines "
              f"{c['unanswerable_declined']:.1%} of unanswerable train questions"
              + (f" ({each})" if len(topics) > 1 else "")
              + f" ({len(gate['sweep'])} thresholds swept, saved with the index); "
              + ("the combination gate.score = combined reads, its threshold placed on out-of-fold scores"
                 if gate.get("how") == "combined" else
                 "chosen among the signals whose AUROC interval lies above 0.5, by least cost"), markup=False)
    print_offtopic_gate(gate.get("offtopic_gate"))
    above = sum(row.get("above", 0) for row in topics.values())
    if gate.get("score_range"):
        low, high = gate["score_range"]
        out.print(f"  {above} unanswerable train question(s) pass the gate; the first score "
                  f"ranges over [{low:.4g}, {high:.4g}] on the train split. A score above the threshold "
                  "means the passages look like they answer the question, not that they are true, "
                  "current or the whole answer.", markup=False)
