"""Neighbours in the reranker's shortlist: the chunks next to a shortlisted one, from the
same document, join it and are scored; nothing else changes."""

from __future__ import annotations

import numpy as np

from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.rerank.features import FEATURES, FeatureMaker
from glassrag.rerank.learned import LearnedReranker
from glassrag.rerank.neighbours import neighbours_of, with_neighbours
from glassrag.schema import Hit


def model(weights: dict[str, float]) -> dict:
    return {"features": list(FEATURES), "mean": [0.0] * len(FEATURES), "std": [1.0] * len(FEATURES),
            "weights": [weights.get(f, 0.0) for f in FEATURES], "bias": 0.0}


def test_neighbours_are_the_adjacent_chunks_of_the_same_document(index):
    for row, chunk in enumerate(index.chunks):
        got = neighbours_of(index, chunk.id, 1)
        expected = [c.id for c in index.chunks if c.doc_id == chunk.doc_id and abs(c.position - chunk.position) == 1]
        assert sorted(got) == sorted(expected)


def test_they_join_the_shortlist_below_it_and_leave_the_tail(index):
    ids = [c.id for c in index.chunks]
    first = next(c for c in index.chunks if neighbours_of(index, c.id, 1))
    other = [i for i in ids if i != first.id and i not in neighbours_of(index, first.id, 1)]
    head = [Hit(first.id, 2.0, 1, "bm25")]
    tail = [Hit(cid, 1.0, r, "bm25") for r, cid in enumerate(neighbours_of(index, first.id, 1) + other[:2], 2)]
    shortlist, rest = with_neighbours(index, head, tail, 1, "rerank")
    added = shortlist[1:]
    assert [h.chunk_id for h in added] == neighbours_of(index, first.id, 1)
    assert all(h.detail["neighbour_of"] == first.id and h.rank > 1 for h in added)
    assert [h.chunk_id for h in rest] == other[:2]


def test_the_reranker_scores_the_neighbours_it_was_given(index):
    bm25 = BM25(index.counts, 1.5, 0.4)
    query = Query("What does E-4107 mean?", index.analyzer("What does E-4107 mean?"))
    ranked = [Hit(index.chunk_id(int(i)), float(s), r, "bm25")
              for r, (i, s) in enumerate(zip(*bm25.search(query.tokens, 100)), 1)]
    plain = LearnedReranker(model({"bm25": 1.0}), FeatureMaker(index, bm25), pool=1)
    wide = LearnedReranker(model({"bm25": 1.0}), FeatureMaker(index, bm25), pool=1, neighbours=1)
    out_plain, _ = plain.apply(query, ranked)
    out_wide, notes = wide.apply(query, ranked)
    joined = neighbours_of(index, ranked[0].chunk_id, 1)
    extra = {h.chunk_id for h in out_wide} - {h.chunk_id for h in out_plain}
    assert {h.chunk_id for h in out_plain} <= {h.chunk_id for h in out_wide}  # nothing lost
    assert extra <= set(joined)  # a neighbour BM25 did not list at all joins too
    assert {h.chunk_id for h in out_wide[: 1 + len(joined)]} == {ranked[0].chunk_id, *joined}
    assert any("neighbouring chunk(s) joined" in n for n in notes)
    probs = [h.score for h in out_wide[: 1 + len(joined)]]
    assert probs == sorted(probs, reverse=True) and all(0.0 < p < 1.0 for p in probs)
    assert np.isclose(out_plain[0].score, max(h.score for h in out_wide if h.chunk_id == ranked[0].chunk_id))
