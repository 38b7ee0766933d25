"""What the fusion methods share: collecting each input's rank and score per chunk."""

from __future__ import annotations

from typing import Any

from glassrag.schema import Hit


def collect(inputs: dict[str, list[Hit]], depth: int) -> dict[str, dict[str, dict[str, Any]]]:
    """chunk id → {input stage: {"rank", "score"}} over each input's top `depth` hits,
    in first-seen order (inputs in the order given, each best first)."""
    seen: dict[str, dict[str, dict[str, Any]]] = {}
    for stage, hits in inputs.items():
        for hit in hits[:depth]:
            seen.setdefault(hit.chunk_id, {})[stage] = {"rank": hit.rank, "score": hit.score}
    return seen


def ranked(name: str, scores: dict[str, float],
           detail: dict[str, dict[str, dict[str, Any]]]) -> list[Hit]:
    """Hits sorted by fused score, ties kept in first-seen order; ranks start at 1."""
    order = sorted(scores, key=lambda cid: -scores[cid])
    return [Hit(cid, float(scores[cid]), rank, name, {"inputs": detail[cid]})
            for rank, cid in enumerate(order, 1)]
