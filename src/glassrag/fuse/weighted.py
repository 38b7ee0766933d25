"""Weighted score fusion on min-max normalised scores (convex combination;
Bruch, Gai & Ingber 2023, "An Analysis of Fusion Functions for Hybrid Retrieval"):

    fused(d) = Σ_r w_r · (s_r(d) - min_r) / (max_r - min_r)

over each input's top `depth` hits; a chunk missing from an input gets 0 from it.
With two inputs `weight` is w for the first and 1 - w for the second; with more,
`weights` lists one per input in order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glassrag.errors import ConfigError
from glassrag.fuse.base import collect, ranked
from glassrag.fuse.normalize import min_max
from glassrag.schema import Hit


class Weighted:
    name = "weighted"

    def __init__(self, weight: float = 0.5, depth: int = 100,
                 weights: list[float] | None = None) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ConfigError(f"fusion weight must be in [0, 1], got {weight}")
        self.weight = weight
        self.depth = depth
        self.weights = weights

    def params(self) -> dict[str, Any]:
        return {"method": "weighted", "weight": self.weight, "depth": self.depth,
                "weights": self.weights}

    def input_weights(self, n: int) -> list[float]:
        if self.weights is not None:
            if len(self.weights) != n:
                raise ConfigError(f"{n} retrievers to fuse but {len(self.weights)} weights",
                                  "give one weight per retriever, in order")
            return list(self.weights)
        if n == 2:
            return [self.weight, 1.0 - self.weight]
        return [1.0 / n] * n

    def fuse(self, inputs: dict[str, list[Hit]]) -> list[Hit]:
        detail = collect(inputs, self.depth)
        scores = dict.fromkeys(detail, 0.0)
        for w, (stage, hits) in zip(self.input_weights(len(inputs)), inputs.items()):
            top = hits[: self.depth]
            norm = min_max(np.array([h.score for h in top]))
            for hit, value in zip(top, norm):
                scores[hit.chunk_id] += w * float(value)
                detail[hit.chunk_id][stage]["normalized"] = float(value)
        return ranked("fuse", scores, detail)
