"""Draw the train/test split of the ml-papers golden set, once.

    python corpora/ml-papers/freeze_golden.py DRAFT.jsonl corpora/ml-papers/golden.jsonl

Questions are numbered mlq001, mlq002, ... in draft order; within each kind they are
shuffled with random.Random(SEED) and the first half (rounded) goes to `train`, the rest
to `test`. This ran once, on the question drafts written while reading the documents as glassrag
extracts them, to write golden.jsonl (the drafts are not kept: golden.jsonl is the record);
the split is frozen since: re-drawing it after seeing test results would leak the test set.
"""

from __future__ import annotations

import json
import random
import sys
from collections import defaultdict

SEED = 20261202
TRAIN_SHARE = 0.5
ORDER = ("id", "question", "split", "kind", "answerable", "answers", "must_contain")


def main(draft: str, out: str) -> None:
    questions = [json.loads(line) for line in open(draft, encoding="utf-8") if line.strip()]
    by_kind: dict[str, list[int]] = defaultdict(list)
    for i, q in enumerate(questions):
        q["id"] = f"mlq{i + 1:03d}"
        by_kind[q["kind"]].append(i)
    rng = random.Random(SEED)
    for kind in sorted(by_kind):
        members = by_kind[kind]
        rng.shuffle(members)
        n_train = round(TRAIN_SHARE * len(members))
        for rank, i in enumerate(members):
            questions[i]["split"] = "train" if rank < n_train else "test"
    with open(out, "w", encoding="utf-8") as f:
        for q in questions:
            f.write(json.dumps({k: q[k] for k in ORDER if k in q}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
