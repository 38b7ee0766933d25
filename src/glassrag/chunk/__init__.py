"""Chunkers, looked up by name in `CHUNKERS`."""

from __future__ import annotations

from typing import Any

from glassrag.chunk.base import Chunker, locate
from glassrag.chunk.document import DocumentChunker
from glassrag.chunk.fixed import FixedChunker
from glassrag.chunk.heading import HeadingChunker
from glassrag.chunk.recursive import RecursiveChunker
from glassrag.chunk.sentence import SentenceChunker
from glassrag.errors import UnknownNameError

CHUNKERS: dict[str, type[Chunker]] = {
    c.name: c for c in (FixedChunker, SentenceChunker, HeadingChunker, RecursiveChunker,
                        DocumentChunker)
}


def make_chunker(name: str, **params: Any) -> Chunker:
    if name not in CHUNKERS:
        raise UnknownNameError("chunker", name, list(CHUNKERS))
    return CHUNKERS[name](**params)


__all__ = ["CHUNKERS", "Chunker", "make_chunker", "locate"]
