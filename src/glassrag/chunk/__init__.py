"""Chunkers, looked up by name in `CHUNKERS`, each as `module:Class` of this package, imported
when one is made: a question only needs `units`' sentence spans, which live in this package."""

from __future__ import annotations

import importlib
from typing import Any

from glassrag.chunk.base import Chunker, locate
from glassrag.errors import UnknownNameError

CHUNKERS: dict[str, str] = {
    "fixed": "fixed:FixedChunker",
    "sentence": "sentence:SentenceChunker",
    "heading": "heading:HeadingChunker",
    "heading-body": "heading_body:HeadingBodyChunker",
    "recursive": "recursive:RecursiveChunker",
    "document": "document:DocumentChunker",
}


def chunker_class(name: str) -> type[Chunker]:
    if name not in CHUNKERS:
        raise UnknownNameError("chunker", name, list(CHUNKERS))
    module, cls = CHUNKERS[name].split(":")
    return getattr(importlib.import_module(f"glassrag.chunk.{module}"), cls)


def make_chunker(name: str, **params: Any) -> Chunker:
    return chunker_class(name)(**params)


__all__ = ["CHUNKERS", "Chunker", "chunker_class", "make_chunker", "locate"]
