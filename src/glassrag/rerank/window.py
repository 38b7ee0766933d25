"""Window scoring: a chunk is scored with the chunks around it, so a passage whose
neighbour also matches the question (a heading chunk and its body, a table and the sentence
that names it) ranks above an isolated match of the same score:

    score'(c) = score(c) + w · max over the neighbours n within `size` places of c in its
                document of (score(n) − lowest score of the list)

A neighbour's score is its score in the list handed in (the candidates of the stage before);
a neighbour outside the list adds nothing. Subtracting the list's lowest score makes the
addition non-negative whatever the scale (BM25, a fused score, a cosine), so a chunk never
loses by its neighbours.
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, Entry, ListStage
from glassrag.store.base import Index


def made(index: Any, config: Any, bm25: Any) -> WindowScore | None:
    """The window `window.size` asks for; none at 0."""
    w = config.window
    return WindowScore(index, w.size, w.weight) if w.size > 0 else None


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "", (f"The score of the stage before, plus {params.get('weight')} × the best score above the list's "
                f"lowest among the {params.get('size')} chunk(s) on each side in the same document. "
                f"{NOT_A_PROBABILITY}")


class WindowScore(ListStage):
    name = "window"
    kind = Kind.WINDOW

    def __init__(self, index: Index, size: int, weight: float) -> None:
        self.index, self.size, self.weight = index, size, weight
        self._around: dict[str, tuple[str, ...]] = {}  # chunk id -> its neighbours' ids

    def params(self) -> dict[str, Any]:
        return {"size": self.size, "weight": self.weight}

    def neighbours(self, chunk_id: str) -> tuple[str, ...]:
        if chunk_id not in self._around:
            self._around[chunk_id] = tuple(c.id for c in self.index.around(chunk_id, self.size) if c.id != chunk_id)
        return self._around[chunk_id]

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        if not hits:
            return [], []
        score = {h.chunk_id: h.score for h in hits}
        low = min(score.values())
        joined, raised = [], 0
        for h in hits:
            best = max((score[n] - low for n in self.neighbours(h.chunk_id) if n in score), default=0.0)
            raised += best > 0
            joined.append((h.score + self.weight * best, h))
        order = sorted(range(len(joined)), key=lambda i: (-joined[i][0], i))  # ties keep the list's order
        out = [Hit(joined[i][1].chunk_id, joined[i][0], r, self.name,
                   {**joined[i][1].detail, "before": joined[i][1].score}) for r, i in enumerate(order, 1)]
        return out, [f"{raised} of {len(hits)} chunk(s) raised by a neighbour in the list"]


WINDOWS = {"window": Entry(made, describe_score)}
