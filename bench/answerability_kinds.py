"""Which near misses the shipped answerability model misses: its held-out AUROC of a
question's own paragraph against each kind of negative, the kinds squad_prepare.py made
(answer-removed, same-article, other-article) and the hard ones squad_hard_negatives.py
made (entity-overlap: the same-article paragraph closest to the question by BM25 without
its answer; edited-question: the question with a name, number or year swapped for one of
the article's that its own paragraph never mentions).

    python bench/answerability_kinds.py [--questions N] [--model FOLDER]

The pairs are the first N (default 500, the trainer's held-out measure) questions of training/squad/heldout.jsonl.gz and
their rows of heldout-hard.jsonl.gz (40 SQuAD 1.1 train articles the model never learned
from; training/squad/PROVENANCE.md). Every pair is scored as the gate scores it
(gate/answerability.py `Answerability.scores`: the int8 ONNX model, one pair a call, no
torch). Per kind:

- AUROC = P(s_own > s_negative) + ½ P(equal), with a 95 % percentile bootstrap interval
  (2,000 resamples, each class resampled on its own, seed 0; gate/calibrate.py);
- declined: the share of the kind's negatives below t₅, the 5th percentile of the own
  paragraphs' logits: what a threshold that keeps 95 % of the answers declines;
- the EXAMPLES highest-scoring negatives of each new kind, to read what it misses;
- for edited-question also the paired drop s(original question) − s(edited question) on the
  same paragraph (its median) and how often the edit did not lower the logit.

Writes bench/results/answerability_kinds.json and .md.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, save  # noqa: E402
from glassrag.gate.answerability import Answerability, model_digest, model_folder  # noqa: E402
from glassrag.gate.calibrate import auroc, auroc_interval  # noqa: E402
from glassrag.rerank.cross_onnx import BUNDLED  # noqa: E402

SQUAD = ROOT / "training" / "squad"
OLD, HARD = SQUAD / "heldout.jsonl.gz", SQUAD / "heldout-hard.jsonl.gz"
KINDS = ("other-article", "same-article", "answer-removed", "entity-overlap", "edited-question")
NEW = {"entity-overlap", "edited-question"}
KEPT = 0.95
EXAMPLES = 5


def read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def first_questions(rows: list[dict], n: int) -> list[str]:
    seen: dict[str, None] = {}
    for r in rows:
        if r["question"] not in seen and len(seen) < n:
            seen[r["question"]] = None
    return list(seen)


def pairs(n: int) -> list[dict]:
    """The rows of the first n held-out questions: heldout.jsonl.gz's, then the label-0 rows of
    heldout-hard.jsonl.gz (whose own rows must be the same: both files made from one snapshot)."""
    old, hard = read(OLD), read(HARD)
    wanted = set(first_questions(old, n))
    rows = [r for r in old if r["question"] in wanted]
    mine = {(r["question"], r["passage"]) for r in rows if r["label"] == 1}
    theirs = {(r["question"], r["passage"]) for r in hard if r["label"] == 1 and r["question"] in wanted}
    if mine != theirs:
        raise SystemExit(f"{HARD.name}'s own rows differ from {OLD.name}'s: remake it with "
                         "scripts/squad_hard_negatives.py")
    return rows + [r for r in hard if r["label"] == 0 and r.get("original", r["question"]) in wanted]


def score(model: Answerability, rows: list[dict]) -> tuple[list[float], float]:
    """Each row's logit as the gate computes it, and the CPU seconds a pair."""
    ids = {r["passage"]: hashlib.sha256(r["passage"].encode()).hexdigest() for r in rows}
    text = {v: k for k, v in ids.items()}
    started = time.process_time()
    out = [model.scores(r["question"], [ids[r["passage"]]], text.__getitem__)[0] for r in rows]
    return out, (time.process_time() - started) / max(1, len(rows))


def figures(rows: list[dict], logits: list[float]) -> dict[str, dict]:
    own = np.array([s for s, r in zip(logits, rows) if r["label"] == 1])
    t5 = float(np.percentile(own, 100 * (1 - KEPT)))
    out = {"own": {"n": int(own.size), "median": round(float(np.median(own)), 3), "t5": round(t5, 3)}}
    for kind in KINDS:
        neg = np.array([s for s, r in zip(logits, rows) if r["label"] == 0 and r.get("kind") == kind])
        if not neg.size:
            continue
        low, high = auroc_interval(own, neg)
        out[kind] = {"n": int(neg.size), "auroc": round(auroc(own, neg), 4), "low": round(low, 4),
                     "high": round(high, 4), "median": round(float(np.median(neg)), 3),
                     "declined": round(float(np.mean(neg < t5)), 4)}
    for kind in NEW & out.keys():
        worst = sorted(((s, r) for s, r in zip(logits, rows) if r.get("kind") == kind), key=lambda x: -x[0])
        out[kind]["highest"] = [{"logit": round(s, 3), "question": r["question"], "passage": r["passage"][:300],
                                 **({"original": r["original"]} if "original" in r else {})}
                                for s, r in worst[:EXAMPLES]]
    # the edit's own effect: the same paragraph, the question before and after
    before = {(r["question"], r["passage"]): s for s, r in zip(logits, rows) if r["label"] == 1}
    drops = [before[(r["original"], r["passage"])] - s for s, r in zip(logits, rows)
             if r.get("kind") == "edited-question" and (r["original"], r["passage"]) in before]
    if drops:
        out["edited-question"]["drop_median"] = round(float(np.median(drops)), 3)
        out["edited-question"]["not_lowered"] = round(float(np.mean(np.array(drops) <= 0)), 4)
        by_type: dict[str, list[float]] = {}
        for s, r in zip(logits, rows):
            if r.get("kind") == "edited-question":
                by_type.setdefault(r["swap"]["type"], []).append(s)
        out["edited-question"]["by_swap"] = {
            t: {"n": len(v), "auroc": round(auroc(own, v), 4)} for t, v in sorted(by_type.items())}
    return out


def markdown(result: dict) -> str:
    f = result["figures"]
    lines = [
        "# Which near misses the shipped answerability model misses (bench/answerability_kinds.py)",
        "",
        f"Held-out SQuAD 1.1 pairs (training/squad/heldout.jsonl.gz and heldout-hard.jsonl.gz, first "
        f"{result['questions']} questions, {f['own']['n']} own paragraphs), scored as the gate scores them "
        f"(int8 ONNX `{result['model']}`, sha256 {result['model_sha256']}…, one pair a call). AUROC of the "
        "own paragraphs against each kind of negative with its 95 % bootstrap interval; *declined*: the "
        f"kind's share below the 5th percentile of the own paragraphs' logits ({f['own']['t5']:+.2f}), what a "
        "threshold that keeps 95 % of the answers declines.",
        "",
        "| kind | new | negatives | AUROC [95 % CI] | median logit | declined at 95 % kept |",
        "|---|---|---|---|---|---|",
        f"| own (answers) | | {f['own']['n']} | | {f['own']['median']:+.2f} | |",
    ]
    for kind in KINDS:
        if kind in f:
            k = f[kind]
            lines.append(f"| {kind} | {'yes' if kind in NEW else ''} | {k['n']} | "
                         f"{k['auroc']:.3f} [{k['low']:.3f}, {k['high']:.3f}] | {k['median']:+.2f} | "
                         f"{k['declined']:.2f} |")
    e = f.get("edited-question")
    if e and "drop_median" in e:
        swaps = ", ".join(f"{t} {v['auroc']:.3f} (n={v['n']})" for t, v in e["by_swap"].items())
        lines += ["", f"Edited questions against their unedited twin on the same paragraph: median drop "
                  f"{e['drop_median']:.2f} logits; the edit did not lower the logit for {e['not_lowered']:.2f} "
                  f"of them. AUROC by the swapped slot: {swaps}."]
    for kind in KINDS:
        if "highest" in f.get(kind, {}):
            lines += ["", f"The {kind} negatives it scores highest:", ""]
            for x in f[kind]["highest"]:
                asked = (f"{x['question']}* (was: {x['original']})" if "original" in x else f"{x['question']}*")
                lines.append(f"- {x['logit']:+.2f} *{asked} — {x['passage'][:160]}…")
    lines += ["", f"{result['pairs']} pairs, {result['cpu_ms_per_pair']} CPU ms a pair on this machine."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=500,
                        help="held-out questions to read (default 500, as the trainer's --heldout-limit)")
    parser.add_argument("--model", default=BUNDLED, help="an answerability model folder (default: the bundled one)")
    args = parser.parse_args()
    rows = pairs(args.questions)
    folder = model_folder(args.model)
    logits, per_pair = score(Answerability(folder, depth=1), rows)
    result = {"questions": args.questions, "pairs": len(rows), "model": args.model,
              "model_sha256": model_digest(folder), "cpu_ms_per_pair": round(1000 * per_pair, 1),
              "files": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in (OLD, HARD)},
              "figures": figures(rows, logits)}
    text = markdown(result)
    print(text)
    save("answerability_kinds", result, seeds={"bootstrap.seed": 0})
    (RESULTS / "answerability_kinds.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
