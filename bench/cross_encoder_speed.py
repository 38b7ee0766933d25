"""CPU time a pair of cross-encoders in the same run: what a smaller model saves the gate.

    python bench/cross_encoder_speed.py --model bundled --model .glassrag/cross-encoder-l2

Each model (int8) scores the same held-out SQuAD pairs (training/squad/heldout.jsonl.gz, the
first 200 pairs), one pair a call as the gate calls it, the models taking turns for three
rounds after one warm-up call each; reported: the process's CPU milliseconds a pair, median
of the rounds, and each model against the first. Results: bench/results/cross_encoder_speed.md.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS  # noqa: E402
from glassrag.rerank.cross_onnx import BUNDLED, OnnxCrossEncoder, bundled_folder  # noqa: E402
from glassrag.rerank.cross_train import read_pairs  # noqa: E402

PAIRS = 200
ROUNDS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, help="a model folder, or bundled (repeatable)")
    args = parser.parse_args()
    rows = read_pairs(ROOT / "training" / "squad" / "heldout.jsonl.gz", 60)
    pairs = [(r["question"], r["passage"]) for r in rows][:PAIRS]
    models = {m: OnnxCrossEncoder(bundled_folder() if m == BUNDLED else Path(m), "int8") for m in args.model}
    for model in models.values():
        model.predict(pairs[:1], batch_size=1)
    spent: dict[str, list[float]] = {m: [] for m in models}
    for _ in range(ROUNDS):
        for name, model in models.items():
            started = time.process_time()
            model.predict(pairs, batch_size=1)
            spent[name].append(1000 * (time.process_time() - started) / len(pairs))
    first = statistics.median(spent[args.model[0]])
    lines = ["# CPU time a pair of the cross-encoders (bench/cross_encoder_speed.py)", "",
             f"{len(pairs)} held-out SQuAD pairs, one pair a call, int8, median of {ROUNDS} rounds taking turns.", "",
             "| model | layers | CPU ms a pair | × the first |", "|---|---|---|---|"]
    for name, model in models.items():
        ms = statistics.median(spent[name])
        # the record names the layers kept when --layers cut the base; else the base had them all
        layers = model.meta.get("layers", f"all of {model.meta.get('base', 'its base')}'s")
        lines.append(f"| {name} | {layers} | {ms:.1f} | {ms / first:.2f} |")
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cross_encoder_speed.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
