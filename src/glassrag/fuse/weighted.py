"""Weighted score fusion on min-max normalised scores (convex combination;
Bruch, Gai & Ingber 2023, "An Analysis of Fusion Functions for Hybrid Retrieval"):

    fused(d) = Σ_r w_r · (s_r(d) - min_r) / (max_r - min_r)

for every chunk d in the union of the inputs' top `depth` hits. With a `ScoreSource` per
input (what the pipeline passes), s_r(d) is retriever r's real score of d even where d is
not in r's list, and min_r, max_r are taken over the whole corpus: the ranking then equals
the plain hybrid that normalises and fuses every chunk's scores. Without sources (fusing
bare lists), min and max are each list's own and a chunk missing from a list gets 0 from
it: a truncated list's minimum is its depth-th score, which stretches the scale, and a
good chunk that one retriever ranked 101st loses that retriever's whole weight.
With two inputs `weight` is w for the first and 1 - w for the second; with more,
`weights` lists one per input in order. With `keep_first` N > 0, every input's first hit then
stands at rank N or better (fuse/base.py `keep_firsts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from glassrag.errors import ConfigError
from glassrag.fuse.base import Fuser, ScoreSource, collect, keep_firsts, ranked, sources
from glassrag.fuse.normalize import min_max
from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.stage import NOT_A_PROBABILITY, StageOutput


@dataclass
class Weighted(Fuser):
    method = "weighted"
    weight: float = 0.5
    depth: int = 100
    weights: list[float] | None = None
    keep_first: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.weight <= 1.0:
            raise ConfigError(f"fusion weight must be in [0, 1], got {self.weight}")

    def input_weights(self, n: int) -> list[float]:
        if self.weights is not None:
            if len(self.weights) != n:
                raise ConfigError(f"{n} retrievers to fuse but {len(self.weights)} weights",
                                  "give one weight per retriever, in order")
            return list(self.weights)
        if n == 2:
            return [self.weight, 1.0 - self.weight]
        return [1.0 / n] * n

    def fuse(self, inputs: dict[str, list[Hit]],
             sources: dict[str, ScoreSource] | None = None) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = dict.fromkeys(detail, 0.0)
        weights = self.input_weights(len(inputs))
        if sources is None:
            for w, (stage, hits) in zip(weights, inputs.items()):
                top = hits[: self.depth]
                norm = min_max(np.array([h.score for h in top]))
                for hit, value in zip(top, norm):
                    scores[hit.chunk_id] += w * float(value)
                    detail[hit.chunk_id][stage]["normalized"] = float(value)
            return keep_firsts(ranked("fuse", scores, detail), inputs, self.keep_first)
        ids = list(detail)
        if not ids:  # nothing to fuse (no candidate's range to read)
            return []
        for w, (stage, hits) in zip(weights, inputs.items()):
            known = {h.chunk_id: h.score for h in hits[: self.depth]}
            missing = [cid for cid in ids if cid not in known]
            source = sources[stage]
            known.update(zip(missing, (float(x) for x in source.score(missing))))
            values = np.array([known[cid] for cid in ids], dtype=np.float64)
            low, high = (source.low, source.high) if source.whole_corpus else (values.min(), values.max())
            norm = (values - low) / (high - low) if high > low else np.ones_like(values)
            for cid, raw, value in zip(ids, values, norm):
                scores[cid] += w * float(value)
                entry = detail[cid].setdefault(stage, {"rank": None, "score": float(raw)})
                entry["normalized"] = float(value)
        return keep_firsts(ranked("fuse", scores, detail), inputs, self.keep_first)

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        """Fuses its inputs' lists, reading each input's declared scores (`sources`)."""
        return StageOutput(tuple(self.fuse({name: list(out.hits) for name, out in inputs.items()},
                                           sources(inputs))))


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "fusion", ("Weighted fusion of each retriever's min-max-normalised score (0 to 1 within this "
                      f"question's list): a relative match strength. {NOT_A_PROBABILITY}")
