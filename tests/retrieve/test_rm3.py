"""BM25 with RM3 feedback: the expanded query is the formula of retrieve/rm3.py worked by
hand on a three-chunk corpus, and the second pass is that query's weighted BM25."""

from __future__ import annotations

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.lexical.bm25 import BM25, TermCounts
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, make_retriever
from glassrag.retrieve.rm3 import RM3Retriever
from glassrag.store.base import ListedChunks

DOCS = [["tilt", "sensor", "calibr"], ["tilt", "calibr", "calibr", "field"], ["batteri", "low"]]


class Tiny:
    """Just what the retriever reads of an index."""

    def __init__(self, docs: list[list[str]]) -> None:
        self.counts = TermCounts.build(docs)
        self.chunks = ListedChunks([None] * len(docs))  # a ChunkTable that stores no ids

    def chunk_id(self, row: int) -> str:
        return f"c{row}"


def retriever(docs_fb: int = 2, terms: int = 10, weight: float = 0.5):
    tiny = Tiny(DOCS)
    config = Config().with_overrides(bm25={"rm3_docs": docs_fb, "rm3_terms": terms, "rm3_weight": weight})
    bm25 = BM25(tiny.counts, config.bm25.k1, config.bm25.b)
    return tiny, bm25, RM3Retriever(tiny, config, bm25)


def test_the_expanded_query_is_rm3_by_hand():
    tiny, bm25, rm3 = retriever()
    v = tiny.counts.vocab
    query = Query("tilt", ["tilt"])
    s = bm25.score_all(["tilt"])
    s0, s1 = float(s[0]), float(s[1])  # chunks 0 and 1 hold "tilt"; chunk 2 scores 0
    share0, share1 = s0 / (s0 + s1), s1 / (s0 + s1)
    # P(t|R) before normalisation: share × tf / length
    rel = {"tilt": share0 / 3 + share1 / 4, "sensor": share0 / 3, "calibr": share0 / 3 + share1 * 2 / 4,
           "field": share1 / 4}
    total = sum(rel.values())
    expected = {v[t]: 0.5 * (1.0 if t == "tilt" else 0.0) + 0.5 * r / total for t, r in rel.items()}
    got = rm3.expansion(query)
    assert set(got) == set(expected)
    for t, w in expected.items():
        assert got[t] == pytest.approx(w, rel=1e-6)
    assert sum(got.values()) == pytest.approx(1.0)


def test_the_second_pass_is_the_weighted_bm25_of_the_expanded_query():
    tiny, bm25, rm3 = retriever()
    weights = rm3.expansion(Query("tilt", ["tilt"]))
    words = {t: w for w, t in tiny.counts.vocab.items()}
    by_term = {t: bm25.score_all([words[t]]) for t in weights}
    expected = sum(w * by_term[t].astype(np.float64) for t, w in weights.items())
    np.testing.assert_allclose(rm3.scores(weights), expected, rtol=1e-5)
    hits, notes = rm3.apply(Query("tilt", ["tilt"]), [])
    assert [h.chunk_id for h in hits] == [f"c{i}" for i in np.argsort(-expected)[:2]]  # chunk 2 scores 0
    assert notes and notes[0].startswith("expanded with: ") and "calibr" in notes[0] and "tilt" not in notes[0]


def test_weight_one_is_plain_bm25_and_unknown_words_find_nothing():
    tiny, bm25, rm3 = retriever(weight=1.0)
    query = Query("tilt sensor", ["tilt", "sensor"])
    np.testing.assert_allclose(rm3.scores(rm3.expansion(query)), bm25.score_all(["tilt", "sensor"]) / 2, rtol=1e-6)
    assert rm3.expansion(Query("zebra", ["zebra"])) == {}
    hits, _ = rm3.apply(Query("zebra", ["zebra"]), [])
    assert hits == []


def test_it_is_a_retriever_by_name(index):
    assert "bm25-rm3" in RETRIEVERS
    r = make_retriever("bm25-rm3", index, index.config, BM25(index.counts, 1.5, 0.4))
    assert r.params()["fb_docs"] == 10 and r.params()["original_weight"] == 0.5
