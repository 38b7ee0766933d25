"""Chunking is linear in the document's length (issue 13.2): `locate()` counted line breaks
from offset 0 for every chunk, `sentence_spans` copied the rest of the section for every
line, and a chunk's section was searched among all sections. The rewrites must give the
same answers as the old code (kept here as the reference). That they scale linearly is a
speed, measured by bench/ingest_scaling.py, not asserted in a test."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from glassrag.chunk.base import Locator
from glassrag.chunk.units import sentence_spans
from glassrag.schema import Document, Section


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|\|)")


def reference_sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """sentence_spans as it was before issue 13 (quadratic), the reference for the rewrite."""
    end = len(text) if end is None else end
    cuts = [start]
    pos = start
    for line in text[start:end].splitlines(keepends=True):
        line_end = pos + len(line)
        body = line.rstrip("\n")
        for m in _SENTENCE_END.finditer(body):
            if m.end() < len(body):
                cuts.append(pos + m.end())
        nxt = text[line_end:end].split("\n", 1)[0]
        wrapped = (body.strip() and nxt.strip() and nxt.lstrip()[:1].islower()
                   and not _BLOCK_START.match(nxt) and not _BLOCK_START.match(body))
        if not wrapped:
            cuts.append(line_end)
        pos = line_end
    cuts.append(end)
    spans = []
    for a, b in zip(cuts, cuts[1:]):
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            spans.append((a + lead, a + trail))
    return spans


def reference_locate(doc: Document, start: int, end: int) -> tuple[str, tuple[str, ...]]:
    if doc.format == "text":
        first = doc.text.count("\n", 0, start) + 1
        last = doc.text.count("\n", 0, max(start, end - 1)) + 1
        return (f"line {first}" if first == last else f"lines {first}-{last}"), ()
    best, best_overlap = None, 0
    for section in doc.sections:
        overlap = min(end, section.end) - max(start, section.start)
        if overlap > best_overlap:
            best, best_overlap = section, overlap
    return ("", ()) if best is None else (best.locator, best.heading_path)


# text made of the characters the rules look at: line breaks of every kind, sentence ends,
# list and table marks, digits, upper and lower case, spaces
TEXTY = st.text(alphabet=st.sampled_from(list("aAbB z.!?\"')-*+|1. \n\n\r\t\x0b\u2028\x1c")),
                max_size=300)


@given(TEXTY, st.integers(0, 300), st.integers(0, 300))
def test_sentence_spans_agree_with_the_reference(text: str, a: int, b: int):
    start, end = sorted((min(a, len(text)), min(b, len(text))))
    assert sentence_spans(text, start, end) == reference_sentence_spans(text, start, end)
    assert sentence_spans(text) == reference_sentence_spans(text)


@st.composite
def documents_and_spans(draw: st.DrawFn) -> tuple[Document, list[tuple[int, int]]]:
    text = draw(st.text(alphabet="ab \n", min_size=1, max_size=200))
    fmt = draw(st.sampled_from(["text", "markdown"]))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    sections = [Section(f"§ {i}", a, b, (f"h{i}",)) for i, (a, b) in enumerate(zip(bounds, bounds[1:]))]
    if draw(st.booleans()):  # overlapping and out-of-order sections, as a loader might make
        sections += draw(st.lists(st.builds(lambda a, n: Section(f"x{a}", a, a + n),
                                            st.integers(0, len(text)), st.integers(0, 40)), max_size=3))
        sections = draw(st.permutations(sections))
    spans = draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, len(text))).map(sorted)
                          .map(tuple), max_size=10))
    return Document("d", "d", "d", fmt, text, tuple(sections)), spans


@given(documents_and_spans())
def test_locator_agrees_with_the_reference(case: tuple[Document, list[tuple[int, int]]]):
    doc, spans = case
    where = Locator(doc)
    for a, b in spans:
        assert where.at(a, b) == reference_locate(doc, a, b)


def reference_term_counts(token_lists: list[list[str]]):
    """TermCounts.build as it was: every token kept as (row, column) Python ints."""
    import numpy as np
    import scipy.sparse as sp

    vocab: dict[str, int] = {}
    rows, cols, lengths = [], [], []
    for i, tokens in enumerate(token_lists):
        ids = [vocab.setdefault(t, len(vocab)) for t in tokens]
        cols.extend(ids)
        rows.extend([i] * len(ids))
        lengths.append(len(ids))
    tf = sp.csc_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                       shape=(len(lengths), len(vocab)))
    tf.sum_duplicates()
    return vocab, tf, np.asarray(lengths, dtype=np.float32)


@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e4107"]), max_size=12), max_size=8))
def test_term_counts_built_one_document_at_a_time_are_the_same(token_lists: list[list[str]]):
    from glassrag.lexical.bm25 import TermCounts

    built = TermCounts.build(iter(token_lists))  # a generator: nothing is kept but counts
    vocab, tf, lengths = reference_term_counts(token_lists)
    assert built.vocab == vocab
    assert built.tf.shape == tf.shape and (built.tf != tf).nnz == 0
    assert built.tf.has_canonical_format
    assert built.doc_len.tolist() == lengths.tolist()
