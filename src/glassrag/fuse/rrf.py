"""Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009):

    RRF(d) = Σ_{r ∈ inputs} 1 / (k + rank_r(d))

summed over the inputs whose top `depth` hits contain d; k = 60 as in the paper.
"""

from __future__ import annotations

from typing import Any

from glassrag.fuse.base import collect, ranked
from glassrag.schema import Hit


class RRF:
    name = "rrf"

    def __init__(self, k: int = 60, depth: int = 100) -> None:
        self.k = k
        self.depth = depth

    def params(self) -> dict[str, Any]:
        return {"method": "rrf", "k": self.k, "depth": self.depth}

    def fuse(self, inputs: dict[str, list[Hit]]) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = {cid: sum(1.0 / (self.k + r["rank"]) for r in by_input.values())
                  for cid, by_input in detail.items()}
        return ranked("fuse", scores, detail)
