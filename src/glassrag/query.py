"""One question on its way through the pipeline: its tokens, and the per-question numbers
that several stages read (every chunk's BM25 score, the dense query vector), computed
once, when first asked for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: building the CLI's parser (`ask --help`) imports this module
    import numpy as np


@dataclass
class Query:
    question: str
    tokens: list[str]
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def cached(self, key: str, compute: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def peek(self, key: str) -> Any:
        """What was cached under `key`, or None."""
        return self._cache.get(key)

    def names(self) -> set[str]:
        """The keys cached so far."""
        return set(self._cache)

    def entries(self, besides: set[str]) -> dict[str, Any]:
        """What was cached under keys not in `besides` (what a stage added)."""
        return {k: v for k, v in self._cache.items() if k not in besides}

    def restore(self, entries: dict[str, Any]) -> None:
        """Put back what a stage added, when its output is reused (nothing already here is replaced)."""
        for k, v in entries.items():
            self._cache.setdefault(k, v)

    def bm25_scores(self, bm25: Any) -> np.ndarray:
        return self.cached("bm25_scores", lambda: bm25.score_all(self.tokens))

    def dense_vector(self, name: str, embed: Any) -> np.ndarray:
        return self.cached(f"dense:{name}", embed)
