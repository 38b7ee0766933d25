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


@pytest.mark.parametrize("n,k,seed", [(10, 3, 0), (50_000, 100, 1), (200_000, 10, 2), (200_000, 1000, 3), (200_000, 1, 5),
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


# Mutation testing (issue 13, docs/testing.md) found these contracts unpinned.

def hand_idf(n: int, df: int) -> float:
    return math.log((n - df + 0.5) / (df + 0.5) + 1)


def test_explain_rows_by_hand_with_a_document_longer_than_average():
    """Document 1 (4 words, avgdl 3) weighs tf 2 of "error" below 2: the contribution is
    occurrences × IDF × weight, each row written out."""
    bm25 = BM25(TermCounts.build(DOCS), k1=1.2, b=0.75)
    avgdl = 3.0
    w_error = 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 4 / avgdl))
    rows = bm25.explain(["error", "tilt", "error", "zebra"], 1)
    assert rows[0] == {"term": "error", "idf": pytest.approx(hand_idf(3, 2)), "tf": 2, "occurrences": 2,
                       "contribution": pytest.approx(2 * hand_idf(3, 2) * w_error)}
    # in the index but not in this document: no weight at all, not a weight of 1
    assert rows[1] == {"term": "tilt", "idf": pytest.approx(hand_idf(3, 2)), "tf": 0, "occurrences": 1,
                       "contribution": 0.0}
    assert rows[2] == {"term": "zebra", "idf": 0.0, "tf": 0, "occurrences": 1, "contribution": 0.0,
                       "note": "not in the index"}
    assert sum(r["contribution"] for r in rows) == pytest.approx(
        float(bm25.score_all(["error", "tilt", "error", "zebra"])[1]), rel=1e-6)
    # a word the index lacks does not end the explanation
    assert [r["term"] for r in bm25.explain(["zebra", "error"], 1)] == ["zebra", "error"]


def test_explain_bounded_keeps_the_largest_in_query_order_and_sums_the_rest():
    docs = [["a", "b", "c", "d", "d"], ["a"], ["a", "b"], ["a", "b", "c"]]
    bm25 = BM25(TermCounts.build(docs))
    full = bm25.explain(["a", "b", "d", "c", "a"], 0)
    by_term = {r["term"]: r for r in full}
    # rarer terms weigh more: d (df 1, tf 2) > c (df 2) > b (df 3) > a (df 4, but asked twice)
    assert [r["term"] for r in sorted(full, key=lambda r: -r["contribution"])][:2] == ["d", "c"]
    bounded = bm25.explain(["a", "b", "d", "c", "a"], 0, max_terms=2)
    assert [r["term"] for r in bounded] == ["d", "c", "(2 more terms)"]  # the query's order
    assert bounded[:2] == [by_term["d"], by_term["c"]]
    rest = bounded[2]
    assert rest == {"term": "(2 more terms)", "idf": 0.0, "tf": 0, "occurrences": 3,
                    "contribution": pytest.approx(by_term["a"]["contribution"] + by_term["b"]["contribution"]),
                    "note": "explanation bounded to 2 terms; this row sums the other 2"}
    # exactly max_terms distinct terms: nothing to bound
    assert bm25.explain(["a", "b"], 0, max_terms=2) == bm25.explain(["a", "b"], 0)


def test_top_k_of_one_and_of_a_single_chunk():
    scores = np.array([0.5, 3.0, 2.0], dtype=np.float32)
    idx, top = top_k(scores, 1)
    assert idx.tolist() == [1] and top.tolist() == [3.0]
    idx, top = top_k(np.array([1.5], dtype=np.float32), 3)
    assert idx.tolist() == [0] and top.tolist() == [1.5]


def test_top_k_of_nothing_is_empty_and_typed():
    for scores, k in ((np.array([1.0, 2.0], dtype=np.float32), 0),
                      (np.array([1.0, 2.0], dtype=np.float32), -2),
                      (np.empty(0, dtype=np.float32), 5)):
        idx, top = top_k(scores, k)
        assert idx.shape == (0,) and idx.dtype == np.int64
        assert top.shape == (0,) and top.dtype == np.float32


def test_counts_and_scores_are_float32_as_the_index_format_stores_them():
    from glassrag.lexical.bm25 import bm25_weights

    counts = TermCounts.build(DOCS)
    assert counts.tf.dtype == np.float32 and counts.doc_len.dtype == np.float32
    assert counts.tf.indices.dtype == np.int32
    assert bm25_weights(counts, 0.9, 0.4).dtype == np.float32
    assert BM25(counts).score_all(["tilt"]).dtype == np.float32
    assert BM25(counts).score_all(["zebra"]).dtype == np.float32


def test_documents_without_words_at_the_end_keep_their_rows():
    """An empty chunk last (a heading alone, an image caption dropped) is still a row: the
    matrix shape comes from the documents, not from the last one holding a word."""
    docs = [["a", "b"], ["b"], [], []]
    for block in (1, 3, 20_000):
        counts = TermCounts.build(docs, block=block)
        assert counts.tf.shape == (4, 2)
        assert counts.doc_len.tolist() == [2.0, 1.0, 0.0, 0.0]
        assert BM25(counts).score_all(["b"]).shape == (4,)


def test_default_parameters_are_pyserinis_beir_settings():
    assert BM25(TermCounts.build(DOCS)).params() == {"k1": 0.9, "b": 0.4}


def test_an_empty_corpus_scores_nothing():
    bm25 = BM25(TermCounts.build([]))
    assert bm25.avgdl == 0.0
    assert bm25.score_all(["tilt"]).shape == (0,)
    assert bm25.search(["tilt"], 5)[0].size == 0


def test_average_length_below_one_is_used_as_it_is():
    """Mostly empty chunks: avgdl 1/3 < 1. Only a zero avgdl is guarded (by 1e-9)."""
    bm25 = BM25(TermCounts.build([["x"], [], []]), k1=1.2, b=0.75)
    w = 1 * 2.2 / (1 + 1.2 * (1 - 0.75 + 0.75 * 1 / (1 / 3)))
    np.testing.assert_allclose(bm25.score_all(["x"]), [hand_idf(3, 1) * w, 0, 0], rtol=1e-6)
    assert bm25.explain(["x"], 0)[0]["contribution"] == pytest.approx(hand_idf(3, 1) * w)


@pytest.mark.parametrize("slice_entries", [1, 2, 5])
def test_weights_computed_in_slices_equal_weights_computed_at_once(monkeypatch, slice_entries):
    """bm25_weights works through the counts a slice of columns at a time (WEIGHT_SLICE entries,
    at least one column); a slice smaller than one column must still cover every entry once."""
    import glassrag.lexical.bm25 as module

    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    docs = [list(rng.choice(words, size=int(rng.integers(0, 9)))) for _ in range(40)]
    counts = TermCounts.build(docs)
    whole = module.bm25_weights(counts, 1.2, 0.75)
    monkeypatch.setattr(module, "WEIGHT_SLICE", slice_entries)
    np.testing.assert_array_equal(module.bm25_weights(counts, 1.2, 0.75), whole)


def test_explain_many_is_explain_of_each_document_in_the_order_asked():
    """One matrix for many documents must not mix their rows up: each list equals that
    document's own explanation written out by hand, and sums to its score."""
    bm25 = BM25(TermCounts.build(DOCS), k1=1.2, b=0.75)
    question = ["error", "tilt", "error", "zebra"]
    many = bm25.explain_many(question, [2, 0, 1, 0])
    assert [[r["tf"] for r in rows] for rows in many] == [[0, 2, 0], [1, 1, 0], [2, 0, 0], [1, 1, 0]]
    avgdl = 3.0
    w_tilt_2 = 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 2 / avgdl))
    assert many[0][1]["contribution"] == pytest.approx(hand_idf(3, 2) * w_tilt_2)
    scores = bm25.score_all(question)
    for doc, rows in zip([2, 0, 1, 0], many):
        assert sum(r["contribution"] for r in rows) == pytest.approx(float(scores[doc]), rel=1e-6)
    assert bm25.explain_many(question, []) == []
    bounded = bm25.explain_many(question, [1, 2], max_terms=1)
    assert [[r["term"] for r in rows] for rows in bounded] == [["error", "(2 more terms)"],
                                                                ["tilt", "(2 more terms)"]]


@pytest.mark.parametrize("seed", range(5))
def test_counts_at_rows_and_columns_equal_scipys_slice(seed):
    """The explanation's counts read without scipy equal scipy's slice of the same matrix, rows
    asked in any order, absent rows and columns of one row included."""
    import scipy.sparse as sp

    from glassrag.lexical.bm25 import Columns, counts_at

    rng = np.random.default_rng(seed)
    dense = rng.integers(0, 3, size=(40, 12)) * (rng.random((40, 12)) < 0.3)
    dense[:, 5] = 0
    dense[7, 6], dense[:, 6] = 0, 0
    dense[7, 6] = 2
    m = sp.csc_matrix(dense.astype(np.float32))
    rows = rng.permutation(40)[:15]
    cols = [0, 5, 6, 11, 3]
    expected = m[:, cols].tocsr()[rows].toarray()
    np.testing.assert_array_equal(counts_at(Columns.of(m), rows, cols), expected)
    assert counts_at(Columns.of(m), rows[:0], cols).shape == (0, 5)


def test_term_counts_keep_plain_arrays_and_make_the_scipy_matrix_when_asked():
    counts = TermCounts.build(DOCS)
    assert "tf" not in vars(counts)  # nothing made yet
    m = counts.tf
    assert m.format == "csc" and m.nnz == counts.columns.nnz == 7 and counts.tf is m
    assert np.shares_memory(m.data, counts.columns.data)
