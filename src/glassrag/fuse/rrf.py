"""Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009):

    RRF(d) = Σ_{r ∈ inputs} 1 / (k + rank_r(d))

summed over the inputs whose top `depth` hits contain d; k = 60 as in the paper.
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.fuse.base import collect, ranked
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.stage import NOT_A_PROBABILITY, StageOutput


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "RRF", (f"Reciprocal rank fusion, Σ 1/({params.get('k', 60)} + rank) over the retrievers: it reflects "
                   f"ranks only. {NOT_A_PROBABILITY}")


class RRF:
    name = kind = "fuse"

    def __init__(self, k: int = 60, depth: int = 100) -> None:
        self.k = k
        self.depth = depth

    @classmethod
    def configured(cls, index: Any, config: Any, bm25: Any) -> RRF:
        return cls(k=config.fuse.k, depth=config.retrieve.depth)

    def params(self) -> dict[str, Any]:
        return {"method": "rrf", "k": self.k, "depth": self.depth}

    def fuse(self, inputs: dict[str, list[Hit]]) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = {cid: sum(1.0 / (self.k + r["rank"]) for r in by_input.values())
                  for cid, by_input in detail.items()}
        return ranked("fuse", scores, detail)

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        return StageOutput(tuple(self.fuse({name: list(out.hits) for name, out in inputs.items()})))
