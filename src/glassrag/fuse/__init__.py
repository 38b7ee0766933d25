"""Fusion of several ranked lists: one stage that reads every fused retriever, looked up by
name in `FUSERS` (fuse.method)."""

from __future__ import annotations

from typing import Any

from glassrag.errors import UnknownNameError
from glassrag.fuse import rrf, weighted
from glassrag.fuse.rrf import RRF
from glassrag.fuse.weighted import Weighted
from glassrag.stage import Entry

FUSERS: dict[str, Entry] = {
    "rrf": Entry(RRF.configured, rrf.describe_score),
    "weighted": Entry(Weighted.configured, weighted.describe_score),
}


def make_fuser(method: str, **params: Any) -> RRF | Weighted:
    """Fusion `method` with explicit parameters (the benches' and tests' way; the pipeline
    makes it from the settings through its entry). Each entry's `make` is its class's
    `configured`, so the class is found in the one table."""
    if method not in FUSERS:
        raise UnknownNameError("fusion method", method, list(FUSERS))
    fusion: type[RRF] | type[Weighted] = FUSERS[method].make.__self__  # type: ignore[attr-defined]
    return fusion(**params)


__all__ = ["FUSERS", "RRF", "Weighted", "make_fuser"]
