"""What the fusion methods share: collecting each input's rank and score per chunk."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from glassrag.schema import Hit


@dataclass(frozen=True)
class ScoreSource:
    """A retriever's score for any chunk, and the range of its scores: over the whole
    corpus when `whole_corpus`, else over the candidates it is asked about (an approximate
    index that never scores every chunk)."""

    score: Callable[[Sequence[str]], Sequence[float]]  # chunk ids -> scores
    low: float = 0.0
    high: float = 0.0
    whole_corpus: bool = True


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
