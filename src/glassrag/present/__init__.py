"""Presentation: excerpt windows, highlighted answer words, the order of "also found"."""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


def also_found_order(items: Sequence[T], doc_of: Callable[[T], str], first_doc: str) -> list[T]:
    """One passage from each further document first (in rank order), then the rest in rank order."""
    seen = {first_doc}
    firsts, rest = [], []
    for item in items:
        doc = doc_of(item)
        if doc in seen:
            rest.append(item)
        else:
            seen.add(doc)
            firsts.append(item)
    return firsts + rest
