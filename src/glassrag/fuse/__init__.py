"""Fusion of several ranked lists, looked up by name in `FUSERS`."""

from __future__ import annotations

from typing import Any

from glassrag.errors import UnknownNameError
from glassrag.fuse.rrf import RRF
from glassrag.fuse.weighted import Weighted

FUSERS: dict[str, Any] = {"rrf": RRF, "weighted": Weighted}


def make_fuser(method: str, **params: Any) -> RRF | Weighted:
    if method not in FUSERS:
        raise UnknownNameError("fusion method", method, list(FUSERS))
    return FUSERS[method](**params)


__all__ = ["FUSERS", "RRF", "Weighted", "make_fuser"]
