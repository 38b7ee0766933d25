"""Merge golden-question drafts into the demo golden set and draw its splits, once.

    python scripts/freeze_golden.py OUT.jsonl DRAFT.jsonl [DRAFT.jsonl ...]

Questions are renumbered q001, q002, ... in draft order; within each kind they are
shuffled with random.Random(20261129) and the first 58 % (rounded) go to `train`, the
rest to `test`. This ran once to make src/glassrag/data/demo/golden.jsonl; the splits
are frozen since: re-drawing them after seeing test results would leak the test set.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict

SEED = 20261129
TRAIN_SHARE = 0.58


def main(out: str, drafts: list[str]) -> None:
    questions = [json.loads(line) for path in drafts for line in open(path, encoding="utf-8")
                 if line.strip()]
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        q["id"] = f"q{i + 1:03d}"
        by_kind[q["kind"]].append(i)
    rng = random.Random(SEED)
    for kind in sorted(by_kind):
        members = by_kind[kind]
        rng.shuffle(members)
        n_train = round(TRAIN_SHARE * len(members))
        for rank, i in enumerate(members):
            questions[i]["split"] = "train" if rank < n_train else "test"
    order = ("id", "question", "split", "kind", "answerable", "answers", "must_contain")
    with open(out, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({k: q[k] for k in order}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
