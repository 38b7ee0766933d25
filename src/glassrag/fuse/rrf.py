"""Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009):

    RRF(d) = Σ_{r ∈ inputs} 1 / (k + rank_r(d))

summed over the inputs whose top `depth` hits contain d; k = 60 as in the paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from glassrag.fuse.base import Fuser, collect, ranked
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.stage import NOT_A_PROBABILITY, StageOutput


@dataclass
class RRF(Fuser):
    method = "rrf"
    k: int = 60
    depth: int = 100

    def fuse(self, inputs: dict[str, list[Hit]]) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = {cid: sum(1.0 / (self.k + r["rank"]) for r in by_input.values())
                  for cid, by_input in detail.items()}
        return ranked("fuse", scores, detail)

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        return StageOutput(tuple(self.fuse({name: list(out.hits) for name, out in inputs.items()})))


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "RRF", (f"Reciprocal rank fusion, Σ 1/({params.get('k', 60)} + rank) over the retrievers: it reflects "
                   f"ranks only. {NOT_A_PROBABILITY}")
