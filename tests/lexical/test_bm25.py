import math

import numpy as np
import pytest

from glassrag.lexical.bm25 import BM25, TermCounts, top_k

DOCS = [["tilt", "sensor", "error"], ["battery", "error", "error", "low"], ["tilt", "tilt"]]


def test_score_equals_hand_computation():
    bm25 = BM25(TermCounts.build(DOCS), k1=1.2, b=0.75)
    n, avgdl = 3, (3 + 4 + 2) / 3

    def idf(df):
        return math.log((n - df + 0.5) / (df + 0.5) + 1)

    def w(tf, dl):
        return tf * (1.2 + 1) / (tf + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))

    scores = bm25.score_all(["tilt", "error"])
    expected = [idf(2) * w(1, 3) + idf(2) * w(1, 3),
                idf(2) * w(2, 4),
                idf(2) * w(2, 2)]
    np.testing.assert_allclose(scores, expected, rtol=1e-6)


def test_repeated_query_term_counts_twice_and_unknown_terms_count_nothing():
    bm25 = BM25(TermCounts.build(DOCS))
    once = bm25.score_all(["battery"])
    np.testing.assert_allclose(bm25.score_all(["battery", "battery", "zebra"]), 2 * once, rtol=1e-6)
    assert not bm25.score_all(["zebra"]).any()


def test_search_returns_best_first_and_only_positive():
    bm25 = BM25(TermCounts.build(DOCS))
    idx, scores = bm25.search(["tilt"], k=10)
    assert idx.tolist() == [2, 0]
    assert scores[0] > scores[1] > 0


def test_explain_sums_to_the_score():
    bm25 = BM25(TermCounts.build(DOCS))
    rows = bm25.explain(["tilt", "error", "zebra"], 0)
    assert [r["term"] for r in rows] == ["tilt", "error", "zebra"]
    assert rows[2]["note"] == "not in the index"
    assert rows[0]["tf"] == 1
    assert sum(r["contribution"] for r in rows) == pytest.approx(
        float(bm25.score_all(["tilt", "error"])[0]), rel=1e-6)


def test_top_k_ties_and_bounds():
    idx, scores = top_k(np.array([0.0, 2.0, 1.0, 2.0], dtype=np.float32), 2)
    assert idx.tolist() == [1, 3]
    assert top_k(np.zeros(3), 5)[0].size == 0


def test_counts_built_in_blocks_equal_counts_built_at_once():
    docs = [["a", "b", "a"], [], ["c"], ["b", "c", "d", "d"], ["a"]] * 3
    whole = TermCounts.build(docs)
    for block in (1, 2, 4):
        parts = TermCounts.build(docs, block=block)
        assert parts.vocab == whole.vocab
        assert (parts.tf != whole.tf).nnz == 0 and parts.tf.shape == whole.tf.shape
        np.testing.assert_array_equal(parts.doc_len, whole.doc_len)
    assert whole.tf.has_sorted_indices and whole.tf.indices.dtype == np.int32


def test_stored_weights_give_the_same_scores_as_computed_ones():
    from glassrag.lexical.bm25 import bm25_weights

    counts = TermCounts.build(DOCS)
    computed = BM25(counts, k1=1.2, b=0.75)
    stored = BM25(counts, k1=1.2, b=0.75, weights=bm25_weights(counts, 1.2, 0.75))
    q = ["tilt", "error", "error", "unknown"]
    np.testing.assert_array_equal(stored.score_all(q), computed.score_all(q))
    # a term repeated in the query counts once per occurrence
    once = computed.score_all(["error"])
    np.testing.assert_allclose(computed.score_all(["error", "error"]), 2 * once)


@pytest.mark.parametrize("n,k,seed", [(10, 3, 0), (50_000, 100, 1), (200_000, 10, 2), (200_000, 1000, 3),
                                      (100_000, 100, 4)])
def test_top_k_equals_a_full_stable_sort(n, k, seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.gamma(1.0, 2.0, size=n), 2).astype(np.float32)  # many ties
    scores[rng.random(n) < 0.4] = 0.0  # chunks without a query term
    if seed == 4:
        scores[:] = 0.0
        scores[rng.choice(n, 50, replace=False)] = 1.0  # fewer positives than k, all tied
    idx, top = top_k(scores, k)
    positive = np.flatnonzero(scores > 0)
    expected = positive[np.lexsort((positive, -scores[positive]))][:k]
    np.testing.assert_array_equal(idx, expected)
    np.testing.assert_array_equal(top, scores[expected])
