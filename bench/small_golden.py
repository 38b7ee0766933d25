"""A newcomer's small golden set (issue 47): does the gate's first threshold, fitted on two
on-topic unanswerable train questions, decline answers the ranking found?

Each draw (seeds 0-4) takes 40 questions of the demo's golden set: 28 answerable and 2
on-topic unanswerable train questions, 10 test questions (what a newcomer labels in an
afternoon). The gate is calibrated on the 30 train questions and the bundled off-topic train
half twice: with gate.on_topic_min = 0 (the calibration of the last version: the 2 on-topic
questions weigh as much as the 185 off-topic ones) and with the default, 5 (with 2 such
questions the first threshold is fitted against the off-topic ones alone). Both are evaluated on the demo's whole test split (60
questions, for more than 10 to count) and the off-topic test half. One stage cache serves every
calibration and evaluation, so each question's passages are scored once.

    .venv/bin/python bench/small_golden.py [--index .glassrag/demo]     (after glassrag demo)

Writes bench/results/small_golden.md.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from pathlib import Path

from common import RESULTS

from glassrag.evaluate.questions import load_questions
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.tune import calibrate_index
from glassrag.pipeline import Pipeline
from glassrag.stage_cache import StageCache
from glassrag.store import open_store

GOLDEN = Path(__file__).resolve().parents[1] / "src" / "glassrag" / "data" / "demo" / "golden.jsonl"
SEEDS = range(5)


def draw(questions, seed: int):
    """28 answerable and 2 unanswerable train questions, 10 test questions."""
    rng = random.Random(seed)
    train = [q for q in questions if q.split == "train"]
    answerable = rng.sample([q for q in train if q.answerable], 28)
    unanswerable = rng.sample([q for q in train if not q.answerable and q.kind != "off-topic"], 2)
    test = rng.sample([q for q in questions if q.split == "test"], 10)
    return [*answerable, *unanswerable, *test]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=".glassrag/demo")
    args = parser.parse_args()
    index = open_store(args.index).read()
    questions = load_questions(GOLDEN, "all", index.documents)
    test = [q for q in questions if q.split == "test"]
    cache = StageCache(args.index)
    rows = []
    for seed in SEEDS:
        drawn = draw(questions, seed)
        for on_topic_min in (0, 5):
            config = index.config.with_overrides(gate={"on_topic_min": on_topic_min})
            gate, reader = calibrate_index(index, config, drawn, config.gate.rule, f"draw {seed}", cache=cache)
            made = replace(index, extra={**index.extra, "gate": gate, "reader": reader})
            run = evaluate(Pipeline(made, config, cache), test, split="test")
            a = run.answer.metrics
            found = [r for r in run.questions if r.answerable and r.metric("ranking", f"hit@{run.k}") == 1.0]
            lost = sum(r.declined for r in found)
            rows.append((seed, on_topic_min, ("none" if gate["threshold"] is None else f"{gate['threshold']:.3g}")
                         + (" (off-topic only)" if gate.get("on_topic_left_out") is not None else ""),
                         f"{lost} of {len(found)}", a["declined_unanswerable"]["value"],
                         a["declined_offtopic"]["value"], a[f"hit@{run.k}"]["value"]))
            print(*rows[-1], flush=True)
    lines = ["# A newcomer's small golden set: the first threshold on 2 on-topic unanswerable questions", "",
             "`python bench/small_golden.py` (bench/small_golden.py says how each draw is made): 40 questions of "
             "the demo's golden set a draw (28 answerable and 2 unanswerable train questions, 10 test), calibrated "
             "with the bundled off-topic train half; evaluated on the demo's 60 test questions and the off-topic "
             "test half.", "",
             "| draw | gate.on_topic_min | first threshold | found test answers declined | unanswerable declined "
             "| off-topic declined | answer hit@5 |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {s} | {m} | {t} | {lost} | {u:.2f} | {o:.3f} | {h:.3f} |" for s, m, t, lost, u, o, h in rows]
    for m in (0, 5):
        mine = [r for r in rows if r[1] == m]
        lost = sum(int(r[3].split()[0]) for r in mine)
        of = sum(int(r[3].split()[2]) for r in mine)
        lines.append(f"\non_topic_min = {m}: {lost} of {of} found test answers declined over {len(mine)} draws; "
                     f"unanswerable declined {sum(r[4] for r in mine) / len(mine):.2f} and off-topic "
                     f"{sum(r[5] for r in mine) / len(mine):.3f} on average")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "small_golden.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[-2:]))


if __name__ == "__main__":
    main()
