"""Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009):

    RRF(d) = Σ_{r ∈ inputs} 1 / (k + rank_r(d))

summed over the inputs whose top `depth` hits contain d; k = 60 as in the paper. With
`keep_first` N > 0, every input's first hit then stands at rank N or better (fuse/base.py
`keep_firsts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from glassrag.fuse.base import Fuser, collect, keep_firsts, ranked
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.stage import NOT_A_PROBABILITY, StageOutput


@dataclass
class RRF(Fuser):
    method = "rrf"
    k: int = 60
    depth: int = 100
    keep_first: int = 0

    def fuse(self, inputs: dict[str, list[Hit]]) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = {cid: sum(1.0 / (self.k + r["rank"]) for r in by_input.values())
                  for cid, by_input in detail.items()}
        return keep_firsts(ranked("fuse", scores, detail), inputs, self.keep_first)

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        return StageOutput(tuple(self.fuse({name: list(out.hits) for name, out in inputs.items()})))


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "RRF", (f"Reciprocal rank fusion, Σ 1/({params.get('k', 60)} + rank) over the retrievers: it reflects "
                   f"ranks only. {NOT_A_PROBABILITY}")
