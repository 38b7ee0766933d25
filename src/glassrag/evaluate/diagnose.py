"""Where the answer was lost: for each miss, the first stage at which it disappeared.

Read from the trace alone (nothing is re-run). In pipeline order:

- `cut`: no chunk holds an answer's text whole, so no stage could return it;
- `not retrieved`: no retriever had an answering chunk in its top N;
- `fused out`, `dropped as outdated`, `reranked out` (a reranker or MMR), `capped out`,
  `outside budget`: an answering chunk was in that stage's input within the top k but
  not in its output's top k;
- `ranked too low`: a retriever had it in its top N, but no stage ever put it in the top k;
- `gated`: the gate declined an answerable question;
- `shown but not visible`: an answering chunk was returned, but the text shown hides
  the answer;
- `answered unanswerable`: the question has no answer and the pipeline gave one anyway.

A hit, or a declined unanswerable question, has no cause (None).
"""

from __future__ import annotations

from glassrag.evaluate.relevance import Judgement
from glassrag.schema import Answer

CAUSES = ("cut", "not retrieved", "fused out", "dropped as outdated", "filtered out", "reranked out",
          "capped out", "outside budget",
          "ranked too low", "gated", "shown but not visible", "answered unanswerable")
CAUSE_OF_KIND = {"fuse": "fused out", "versions": "dropped as outdated", "filter": "filtered out",
                 "window": "reranked out", "rerank": "reranked out",
                 "mmr": "reranked out", "cap": "capped out", "budget": "outside budget"}


def loss_cause(judgement: Judgement, answerable: bool, answer: Answer, k: int,
               visible: bool) -> str | None:
    if not answerable:
        return None if answer.declined else "answered unanswerable"
    relevant = judgement.relevant_chunks() - judgement.excluded
    shown = set() if answer.declined else {
        p.chunk_id for p in ([answer.passage] if answer.passage else []) + list(answer.also_found)}
    if not answer.declined and shown & relevant:
        return None if visible else "shown but not visible"
    if not judgement.intact and not relevant:
        return "cut"
    retrieved = [t for t in answer.trace if t.kind == "retrieve"]
    if not any(h.chunk_id in relevant for t in retrieved for h in t.hits):
        return "not retrieved"
    # a later stage loses it when it was in its input's top k and is not in its own
    had_it = any(h.chunk_id in relevant for t in retrieved for h in t.hits[:k])
    for t in answer.trace:
        if t.kind == "gate":
            if answer.declined and had_it:
                return "gated"
            continue
        if t.kind in CAUSE_OF_KIND:
            in_top = any(h.chunk_id in relevant for h in t.hits[:k])
            if had_it and not in_top:
                return CAUSE_OF_KIND[t.kind]
            had_it = in_top
    # not in the top k when the gate decided: declined or not, the ranking had lost it
    return "ranked too low"
