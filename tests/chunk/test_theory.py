"""The closed-form expectations of fixed-size chunking against what the chunker does."""

import math
from pathlib import Path

import pytest

from glassrag.chunk import make_chunker
from glassrag.chunk.theory import chunk_count, cut_probability, intact_rate
from glassrag.ingest.text import load_text
from glassrag.schema import Document


def words_doc(n: int) -> Document:
    text = " ".join(f"w{i}" for i in range(n))
    ex = load_text(Path("w.txt"), text.encode())
    return Document("w", "w", "w.txt", "text", ex.text, ex.sections)


def test_formulas_by_hand():
    assert chunk_count(100, 20, 5) == math.ceil((100 - 5) / (20 - 5))  # 7
    assert chunk_count(10, 20, 5) == 1
    assert cut_probability(10, 50, 0) == (10 - 1 - 0) / (50 - 0)
    assert cut_probability(10, 50, 9) == 0.0
    assert cut_probability(10, 50, 4) == (10 - 1 - 4) / (50 - 4)
    assert cut_probability(80, 50, 0) == 1.0


@pytest.mark.parametrize("n,size,overlap", [(1000, 50, 0), (1000, 50, 10), (997, 64, 16), (30, 50, 5)])
def test_chunk_count_matches_fixed_chunker(n, size, overlap):
    chunks = make_chunker("fixed", size=size, overlap=overlap).chunk(words_doc(n))
    assert len(chunks) == chunk_count(n, size, overlap)


@pytest.mark.parametrize("span,size,overlap", [(10, 50, 0), (10, 50, 4), (25, 60, 10), (12, 40, 11)])
def test_cut_probability_matches_fixed_chunker(span, size, overlap):
    """Over every start position away from the text's ends, the share of spans cut equals
    (L - 1 - o)/(s - o), exactly when the positions cover whole strides."""
    step = size - overlap
    n = 40 * step + size
    doc = words_doc(n)
    chunks = make_chunker("fixed", size=size, overlap=overlap).chunk(doc)
    word_spans = [(m.start(), m.end()) for m in __import__("re").finditer(r"\S+", doc.text)]
    chunk_spans = [(c.start, c.end) for c in chunks]
    starts = range(step, step * 31)  # 30 whole strides in the interior
    spans = [(word_spans[p][0], word_spans[p + span - 1][1]) for p in starts]
    measured = 1.0 - intact_rate(spans, chunk_spans)
    assert measured == pytest.approx(cut_probability(span, size, overlap), abs=1e-12)
