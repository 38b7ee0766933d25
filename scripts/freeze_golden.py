"""Merge golden-question drafts into the demo golden set and draw its splits, once.

    python scripts/freeze_golden.py OUT.jsonl DRAFT.jsonl [DRAFT.jsonl ...]
        [--seed N] [--train-share F] [--prefix P]

Questions are renumbered q001, q002, ... (PREFIX001, ...) in draft order; within each kind
they are shuffled with random.Random(SEED) and the first TRAIN_SHARE (rounded) go to
`train`, the rest to `test`. This ran once to make src/glassrag/data/demo/golden.jsonl
(the defaults: seed 20261129, 58 %) and once for corpora/ml-papers/golden.jsonl
(`--seed 20261202 --train-share 0.5 --prefix mlq`); the splits are frozen since: re-drawing
them after seeing test results would leak the test set.
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

SEED = 20261129
TRAIN_SHARE = 0.58

ORDER = ("id", "question", "split", "kind", "answerable", "answers", "must_contain")


def main(out: str, drafts: list[str], seed: int = SEED, train_share: float = TRAIN_SHARE,
         prefix: str = "q") -> None:
    questions = [json.loads(line) for path in drafts for line in open(path, encoding="utf-8")
                 if line.strip()]
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        q["id"] = f"{prefix}{i + 1:03d}"
        by_kind[q["kind"]].append(i)
    rng = random.Random(seed)
    for kind in sorted(by_kind):
        members = by_kind[kind]
        rng.shuffle(members)
        n_train = round(train_share * len(members))
        for rank, i in enumerate(members):
            questions[i]["split"] = "train" if rank < n_train else "test"
    with open(out, "w", encoding="utf-8") as f:
        for q in questions:  # an unanswerable question has no answers or must_contain
            f.write(json.dumps({k: q[k] for k in ORDER if k in q}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="number golden-question drafts and draw their splits, once")
    parser.add_argument("out")
    parser.add_argument("drafts", nargs="+")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--train-share", type=float, default=TRAIN_SHARE)
    parser.add_argument("--prefix", default="q")
    args = parser.parse_args()
    main(args.out, args.drafts, args.seed, args.train_share, args.prefix)
