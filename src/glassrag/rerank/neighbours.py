"""Neighbours in the shortlist: the chunks next to each shortlisted chunk in its document
join the reranker's shortlist, so an answer that sits one chunk after the passage BM25
found (a heading chunk, then its body) can be scored and ranked in.

A neighbour keeps a rank below every shortlisted chunk (its `inv_rank` feature is small) and
records which chunk brought it (`detail.neighbour_of`).
"""

from __future__ import annotations

from glassrag.schema import Hit
from glassrag.store.base import Index


def neighbours_of(index: Index, chunk_id: str, width: int) -> list[str]:
    """The ids of the chunks up to `width` places before and after `chunk_id` in its document."""
    return [c.id for c in index.around(chunk_id, width) if c.id != chunk_id]


def with_neighbours(index: Index, head: list[Hit], tail: list[Hit], width: int,
                    stage: str) -> tuple[list[Hit], list[Hit]]:
    """(shortlist with the neighbours appended, the tail without them)."""
    have = {h.chunk_id for h in head}
    by_id = {h.chunk_id: h for h in tail}
    added: list[Hit] = []
    for h in head:
        for cid in neighbours_of(index, h.chunk_id, width):
            if cid in have:
                continue
            have.add(cid)
            before = by_id.get(cid)
            added.append(Hit(cid, before.score if before else 0.0, len(head) + len(added) + 1, stage,
                             {**(before.detail if before else {}), "neighbour_of": h.chunk_id}))
    return head + added, [h for h in tail if h.chunk_id not in have]
