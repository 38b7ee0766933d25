"""How well the answerability model tells a question's own paragraph from the near misses,
on SQuAD 1.1 train articles it never learned from, kind by kind, including the hardest:
its own paragraph with the sentences that hold the answer taken out (`answer-removed`).

    python scripts/squad_prepare.py GIT_DIR --answer-removed   # .glassrag/training/, 30 s
    python bench/cross_encoder_heldout.py [--model FOLDER] [--pairs N]

The held-out pairs are the 40 held-out articles' (training/squad/PROVENANCE.md); the figure
is the AUROC of the own paragraphs against each kind of negative, with a bootstrap
interval (rerank/cross_train.py `heldout_figures`). Writes bench/results/cross_encoder_heldout.json.
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

HELDOUT = ROOT / ".glassrag" / "training" / "heldout-answer-removed.jsonl.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=Path, default=None, help="model folder (default: the bundled one)")
    parser.add_argument("--pairs", type=int, default=2000, help="held-out pairs to read (default 2000)")
    args = parser.parse_args()
    if not HELDOUT.exists():
        raise SystemExit(f"{HELDOUT} is missing: run python scripts/squad_prepare.py GIT_DIR --answer-removed")
    folder = args.model or bundled_folder()
    figures = heldout_figures(folder, precision_of(folder), read_pairs(HELDOUT, args.pairs))
    out = {"model": str(args.model or "bundled"), "precision": precision_of(folder), "file": HELDOUT.name,
           **figures, "provenance": provenance({})}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cross_encoder_heldout.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for kind in ("same-article", "other-article", "answer-removed"):
        if kind in figures:
            f = figures[kind]
            print(f"{kind:15s} AUROC {f['auroc']:.3f} [{f['low']:.3f}, {f['high']:.3f}]  "
                  f"({f['n_own']} own paragraphs, {f['n_negative']} negatives)")
    print(f"{figures['ms_per_pair']} ms a pair ({out['precision']})")


if __name__ == "__main__":
    main()
