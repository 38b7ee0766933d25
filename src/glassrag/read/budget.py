"""The context budget: the best chunks, in order, that fit together in W words
(a chunk that does not fit in what is left is skipped, the next may still fit)."""

from __future__ import annotations

from typing import Any, Callable

from glassrag.query import Query
from glassrag.schema import Hit


class Budget:
    name = "budget"
    kind = "budget"

    def __init__(self, words: int, length: Callable[[str], int]) -> None:
        self.words = words
        self.length = length  # chunk id -> words

    def params(self) -> dict[str, Any]:
        return {"words": self.words}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        packed, used, skipped = [], 0, 0
        for h in hits:
            n = self.length(h.chunk_id)
            if used + n > self.words:
                skipped += 1
                continue
            used += n
            packed.append(Hit(h.chunk_id, h.score, len(packed) + 1, self.name, h.detail))
        notes = [f"{used} of {self.words} words used by {len(packed)} chunk(s)"]
        if skipped:
            notes.append(f"{skipped} chunk(s) did not fit")
        return packed, notes
