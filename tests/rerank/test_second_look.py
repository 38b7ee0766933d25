"""Versions, the cap and MMR on tiny inline lists, with expected orders by hand."""

import numpy as np
import pytest
import scipy.sparse as sp

from glassrag.ingest.versions import superseded
from glassrag.query import Query
from glassrag.rerank.cap import DocumentCap
from glassrag.rerank.mmr import MMR, tfidf_rows
from glassrag.rerank.versions import PreferCurrent
from glassrag.schema import Document, Hit

Q = Query("q", ["q"])


def hits(*ids):
    return [Hit(c, 10.0 - i, i + 1, "in") for i, c in enumerate(ids)]


def doc(doc_id, **meta):
    return Document(doc_id, doc_id, f"{doc_id}.md", "markdown", "x", (), meta)


DOCS = {"old": doc("old", superseded_by="new"), "new": doc("new"), "other": doc("other")}
CHUNK_DOC = {"o1": "old", "o2": "old", "n1": "new", "x1": "other"}


def test_superseded_reads_either_side_of_the_link():
    assert superseded(DOCS) == {"old": "new"}
    assert superseded({"a": doc("a"), "b": doc("b", supersedes="a")}) == {"a": "b"}
    assert superseded({"a": doc("a", superseded_by="missing")}) == {}


def test_demote_puts_superseded_chunks_below_every_current_one():
    out, notes = PreferCurrent(DOCS, CHUNK_DOC, "demote").apply(Q, hits("o1", "n1", "o2", "x1"))
    assert [h.chunk_id for h in out] == ["n1", "x1", "o1", "o2"]
    assert [h.rank for h in out] == [1, 2, 3, 4]
    assert notes == ["demoted 2 chunk(s) below the current versions: old is superseded by new"]


def test_drop_removes_them():
    out, notes = PreferCurrent(DOCS, CHUNK_DOC, "drop").apply(Q, hits("o1", "n1", "o2", "x1"))
    assert [h.chunk_id for h in out] == ["n1", "x1"]
    assert notes[0].startswith("dropped 2 chunk(s)")


def test_cap_keeps_at_most_m_per_document():
    chunk_doc = {"a1": "a", "a2": "a", "a3": "a", "b1": "b"}
    out, notes = DocumentCap(chunk_doc, 2).apply(Q, hits("a1", "a2", "a3", "b1"))
    assert [h.chunk_id for h in out] == ["a1", "a2", "b1"]
    assert notes == ["removed 1 chunk(s) beyond 2 per document"]


def test_mmr_pushes_a_near_duplicate_down():
    # chunks 0 and 1 are the same text, chunk 2 is different
    tf = sp.csr_matrix(np.array([[2, 1, 0, 0], [2, 1, 0, 0], [0, 0, 1, 1], [1, 0, 0, 3]], dtype=float))
    vectors = tfidf_rows(tf)
    position = {"dup1": 0, "dup2": 1, "other": 2, "third": 3}
    ranked = [Hit("dup1", 1.0, 1, "in"), Hit("dup2", 0.9, 2, "in"), Hit("other", 0.8, 3, "in"),
              Hit("third", 0.0, 4, "in")]
    out, _ = MMR(vectors, position, relevance=0.5).apply(Q, ranked)
    assert [h.chunk_id for h in out][:2] == ["dup1", "other"]
    # with λ = 1 MMR is the input order
    out, notes = MMR(vectors, position, relevance=1.0).apply(Q, ranked)
    assert [h.chunk_id for h in out] == ["dup1", "dup2", "other", "third"] and notes == []


def test_mmr_first_pick_value_by_arithmetic():
    tf = sp.csr_matrix(np.eye(3))
    ranked = [Hit("a", 3.0, 1, "in"), Hit("b", 2.0, 2, "in"), Hit("c", 1.0, 3, "in")]
    out, _ = MMR(tfidf_rows(tf), {"a": 0, "b": 1, "c": 2}, relevance=0.7).apply(Q, ranked)
    # orthogonal chunks: no redundancy, so the value is λ · normalised relevance
    assert [h.detail["mmr"] for h in out] == pytest.approx([0.7 * 1.0, 0.7 * 0.5, 0.7 * 0.0])
