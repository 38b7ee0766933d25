"""Closed-form expectations for fixed-size chunking, to compare with what a chunker does.

With a text of N units cut into windows of s units overlapping by o (stride s - o):

- number of chunks:  n = ceil((N - o) / (s - o))   for N > s, else 1
- a span of L consecutive units is cut (lies in no single window) with probability
  P(cut) = (L - 1 - o) / (s - o), clipped to [0, 1]; 0 when o >= L - 1,
  for a span starting at a uniformly random position. A window holds the span only if
  the span starts within its first s - L + 1 units; windows start every s - o units.
"""

from __future__ import annotations

import math


def chunk_count(n_units: int, size: int, overlap: int) -> int:
    """ceil((N - o) / (s - o)), and 1 for a text no longer than one window."""
    if n_units <= 0:
        return 0
    if n_units <= size:
        return 1
    return math.ceil((n_units - overlap) / (size - overlap))


def cut_probability(span_units: int, size: int, overlap: int) -> float:
    """(L - 1 - o) / (s - o) clipped to [0, 1]: the chance a span of L units is split."""
    if overlap >= span_units - 1:
        return 0.0
    return min(1.0, (span_units - 1 - overlap) / (size - overlap))


def intact_rate(spans: list[tuple[int, int]], chunks: list[tuple[int, int]]) -> float:
    """Share of [start, end) spans that lie wholly inside at least one chunk span."""
    if not spans:
        return float("nan")
    whole = sum(any(a <= s and e <= b for a, b in chunks) for s, e in spans)
    return whole / len(spans)
