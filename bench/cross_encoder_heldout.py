"""How well each answerability model tells a question's own paragraph from the near misses,
on SQuAD 1.1 train articles none of them learned from, kind by kind, including the hardest:
its own paragraph with the sentences that hold the answer taken out (`answer-removed`).

    python bench/cross_encoder_heldout.py [--model FOLDER ...] [--questions N]

The held-out pairs are the 40 held-out articles' (training/squad/heldout.jsonl.gz, made by
scripts/squad_prepare.py; training/squad/PROVENANCE.md); the figures are the AUROC of the
own paragraphs against each kind of negative, with a bootstrap interval, and the share of
questions whose own paragraph outscores all its negatives (rerank/cross_train.py
`heldout_figures`). Every model named (default: the bundled one) is measured on the same
pairs in the same run. Writes bench/results/cross_encoder_heldout.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402
from glassrag.rerank.cross_onnx import bundled_folder, precision_of  # noqa: E402
from glassrag.rerank.cross_train import heldout_figures, read_pairs  # noqa: E402

HELDOUT = ROOT / "training" / "squad" / "heldout.jsonl.gz"
KINDS = ("same-article", "answer-removed", "other-article")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, action="append", default=None,
                        help="a model folder; repeat to compare (default: the bundled one)")
    parser.add_argument("--questions", type=int, default=500, help="held-out questions to read (default 500)")
    args = parser.parse_args()
    rows = read_pairs(HELDOUT, args.questions)
    models = args.model or [bundled_folder()]
    out = {"file": str(HELDOUT.relative_to(ROOT)), "questions": args.questions, "models": [],
           "provenance": provenance({})}
    print(f"{'model':40s} {'precision':9s} " + " ".join(f"{k:>24s}" for k in KINDS) + "  own first  ms/pair")
    for folder in models:
        figures = heldout_figures(folder, precision_of(folder), rows)
        name = "bundled" if folder == bundled_folder() else str(folder)
        out["models"].append({"model": name, "precision": precision_of(folder), **figures})
        cells = [f"{figures[k]['auroc']:.3f} [{figures[k]['low']:.3f}, {figures[k]['high']:.3f}]" if k in figures
                 else "" for k in KINDS]
        print(f"{name:40s} {precision_of(folder):9s} " + " ".join(f"{c:>24s}" for c in cells)
              + f"  {figures['own_first']['share']:.3f}      {figures['ms_per_pair']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cross_encoder_heldout.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
