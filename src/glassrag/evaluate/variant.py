"""One index of a workbench (evaluate/workbench.py): the index of one set of index-time
settings, with the stage cache, the judge and the calibrations every configuration run on it
shares."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Sequence

from glassrag.config import Config
from glassrag.evaluate.grid import reingest_settings
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.remember import Remembered, RememberedChunks, RememberingIndex, RememberingJudge
from glassrag.stage_cache import StageCache, digest
from glassrag.store.base import Index

# what a workbench keeps between configurations: nothing (to time what caching saves), the
# stage outputs of each index, or also each index's chunks, analyses and judgements once read
# (evaluate/remember.py: a sweep reads the same chunks for every configuration)
CACHING = ("none", "stages", "all")


def fingerprint(config: Config) -> str:
    """A short digest of the settings an index is built with (its folder's name)."""
    return digest("index", reingest_settings(config))[:12]


@dataclass
class Variant:
    """One index of the workbench, with its stage cache, its judge and its calibrations
    (settings key -> the index calibrated for them, fitting.calibrated)."""

    fingerprint: str
    index: Index
    path: str
    built: bool  # made by this workbench (False: the base index, or one kept by an earlier one)
    seconds: float
    cache: StageCache | None
    judge: Judge
    calibrations: dict[str, Index] = field(default_factory=dict)

    def describe(self, base: Config) -> dict[str, Any]:
        """Its fingerprint, where it is, and the index-time settings it differs from `base` in."""
        mine = reingest_settings(self.index.config)
        theirs = reingest_settings(base)
        return {"fingerprint": self.fingerprint, "path": self.path, "built": self.built,
                "seconds": round(self.seconds, 3), "chunks": len(self.index.chunks),
                "settings": {n: v for n, v in mine.items() if theirs.get(n) != v}}


def variant_for(index: Index, path: str, caching: str, built: bool = False, seconds: float = 0.0) -> Variant:
    """The workbench's view of an index: with `caching` "all", chunks kept once read and each
    question judged once; a stage cache unless `caching` is "none"."""
    fp = fingerprint(index.config)
    if caching == "all":
        index = RememberingIndex(**{**{f.name: getattr(index, f.name) for f in fields(Index)},
                                    "chunks": RememberedChunks(index.chunks),
                                    "documents": Remembered(index.documents)})
    return Variant(fp, index, path, built, seconds, None if caching == "none" else StageCache(fp),
                   RememberingJudge(index.chunks) if caching == "all" else Judge(index.chunks))


def cache_counts(variants: Sequence[Variant]) -> dict[str, int]:
    """Stage outputs reused (hits), computed (misses) and stored, over the variants' caches."""
    counts = {"hits": 0, "misses": 0, "stored": 0}
    for v in variants:
        if v.cache is not None:
            for k, n in v.cache.counts().items():
                counts[k] += n
    return counts
