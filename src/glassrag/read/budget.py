"""The context budget: the best chunks, in order, that fit together in W words
(a chunk that does not fit in what is left is skipped, the next may still fit)."""

from __future__ import annotations

from typing import Any, Callable

from glassrag.errors import ConfigError
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ListStage, keeps_scores


def made(index: Any, config: Any, bm25: Any) -> Budget:
    """The budget of `answer.budget_words`; an error when it holds no whole chunk of this index."""
    words = config.answer.budget_words
    if words < 1:
        raise ConfigError(f"answer.budget_words must be at least 1, got {words}")
    built = index.config.chunk
    if built.unit == "words" and words < built.size and built.chunker != "document":
        raise ConfigError(
            f"a context budget of {words} words holds no whole chunk: this "
            f"index's chunks are up to {built.size} words",
            f"set [answer] budget_words to at least {built.size}")
    return Budget(words, index.chunk_words)


class Budget(ListStage):
    name = "budget"
    kind = Kind.BUDGET

    def __init__(self, words: int, length: Callable[[str], int]) -> None:
        self.words = words
        self.length = length  # chunk id -> words

    def params(self) -> dict[str, Any]:
        return {"words": self.words}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        packed: list[Hit] = []
        used, skipped = 0, 0
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


BUDGETS = {"budget": Entry(made, keeps_scores("the best chunks that fit together in W words, in order"),
                           term="budget")}
