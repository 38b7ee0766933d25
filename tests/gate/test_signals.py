"""The gate's signals by arithmetic on a three-chunk corpus (gate/signals.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from glassrag.gate.signals import agreement, gather, held, lexical_signals, margin, top_score
from glassrag.lexical.bm25 import BM25, Columns, TermCounts
from glassrag.schema import Hit, StageTrace

# chunk 0: alpha beta; chunk 1: beta gamma; chunk 2: delta
VOCAB = {"alpha": 0, "beta": 1, "gamma": 2, "delta": 3}
TF = sp.csc_matrix(np.array([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]], dtype=np.float64))
BM = BM25(TermCounts(VOCAB, Columns.of(TF), np.array([2.0, 2.0, 1.0])), k1=1.5, b=0.4)
N = 3
ONE = math.log((N - 1 + 0.5) / (1 + 0.5) + 1)    # IDF of a term in one chunk
TWO = math.log((N - 2 + 0.5) / (2 + 0.5) + 1)    # in two
UNSEEN = math.log((N + 0.5) / 0.5 + 1)           # never seen: the largest IDF there is


def test_lexical_signals_by_arithmetic():
    tokens = ["alpha", "alpha", "gamma", "zeta", "beta"]
    got = lexical_signals(tokens, BM, rows=[0, 1], top_bm25=2.0)
    total = ONE + ONE + UNSEEN + TWO  # distinct terms: alpha, gamma, zeta, beta
    assert got["bm25_norm"] == pytest.approx(2.0 / ((2 * ONE + ONE + UNSEEN + TWO) * (1.5 + 1)))
    assert got["known_share"] == pytest.approx((ONE + ONE + TWO) / total)
    assert got["term_share"] == pytest.approx((ONE + TWO) / total)      # chunk 0: alpha, beta
    assert got["coverage"] == pytest.approx((ONE + TWO + ONE) / total)  # chunks 0-1: + gamma
    assert got["rarest_held"] == pytest.approx(0.0)                     # zeta, never seen, is in neither


def test_rarest_held_is_the_rarest_absent_term():
    """1 − the largest IDF of a question term the passages lack, over the largest IDF there is."""
    assert lexical_signals(["alpha", "delta"], BM, rows=[0], top_bm25=1.0)["rarest_held"] == pytest.approx(1 - ONE / UNSEEN)
    assert lexical_signals(["beta", "delta"], BM, rows=[0], top_bm25=1.0)["rarest_held"] == pytest.approx(1 - ONE / UNSEEN)
    assert lexical_signals(["beta", "gamma"], BM, rows=[0, 1], top_bm25=1.0)["rarest_held"] == 1.0  # every term held
    assert lexical_signals(["beta", "alpha"], BM, rows=[1], top_bm25=1.0)["rarest_held"] == pytest.approx(1 - ONE / UNSEEN)


def test_held_is_the_term_chunk_table():
    """Every (row, term) of the three chunks, rows in any order and repeated, against the matrix;
    a term no chunk holds (an empty column) is held nowhere."""
    empty = BM25(TermCounts({**VOCAB, "omega": 4}, Columns.of(sp.csc_matrix(np.c_[TF.toarray(), np.zeros(3)])),
                            np.array([2.0, 2.0, 1.0])), k1=1.5, b=0.4)
    rows, terms = [2, 0, 1, 0], np.array([3, 0, 1, 2, 4])
    want = np.c_[TF.toarray(), np.zeros(3)][np.ix_(rows, terms)] > 0
    assert (held(empty, rows, terms) == want).all()
    assert held(BM, [], np.array([0, 1])).shape == (0, 2)


def test_lexical_signals_without_terms_or_rows():
    assert lexical_signals([], BM, rows=[0], top_bm25=1.0) == {
        "bm25_norm": 0.0, "known_share": 0.0, "term_share": 0.0, "coverage": 0.0, "rarest_held": 1.0}
    got = lexical_signals(["delta", "zeta"], BM, rows=[], top_bm25=0.0)
    assert got["known_share"] == pytest.approx(ONE / (ONE + UNSEEN))
    assert got["term_share"] == got["coverage"] == got["bm25_norm"] == 0.0
    only_second = lexical_signals(["delta"], BM, rows=[0, 2], top_bm25=0.0)
    assert only_second["term_share"] == 0.0 and only_second["coverage"] == pytest.approx(1.0)


def trace(name, kind, scores, ids=None):
    ids = ids or [f"c{i}" for i in range(len(scores))]
    return StageTrace(name, kind, {}, (), tuple(Hit(c, s, r, name) for r, (c, s) in enumerate(zip(ids, scores), 1)),
                      len(scores), 0.0)


def test_top_margin_and_agreement():
    assert top_score(trace("bm25", "retrieve", [])) == 0.0 and margin(trace("bm25", "retrieve", [])) == 0.0
    assert top_score(trace("bm25", "retrieve", [3.0, 1.0])) == 3.0
    assert margin(trace("f", "fuse", [9.0, 7.0, 6.0, 5.0, 4.0, 1.0])) == 9.0 - 4.0  # s1 - s5
    assert margin(trace("f", "fuse", [9.0, 7.0])) == 9.0 - 7.0                      # fewer than 5: the last
    a = trace("bm25", "retrieve", [1.0] * 6, ["a", "b", "c", "d", "e", "f"])
    b = trace("lsa", "observe", [1.0] * 5, ["a", "b", "x", "y", "f"])
    c = trace("nn", "retrieve", [1.0] * 5, ["a", "b", "c", "d", "e"])
    assert agreement([a]) == 0.0
    assert agreement([a, b]) == 2 / 5  # f is 6th in a: outside its top 5
    assert agreement([a, b, c]) == pytest.approx((2 / 5 + 5 / 5 + 2 / 5) / 3)


def test_gather_reads_the_stages_it_should():
    position = {"c0": 0, "c1": 1, "c2": 2}
    stages = [trace("bm25", "retrieve", [2.0, 1.0], ["c0", "c1"]), trace("lsa", "observe", [0.9], ["c2"]),
              trace("fuse", "fuse", [0.8, 0.5], ["c1", "c0"]), trace("versions", "versions", [0.7, 0.1], ["c1", "c0"])]
    got = gather(stages, ["alpha", "gamma"], BM, np.array([2.0, 1.5, 0.0]), position, k=1)
    assert (got["top:bm25"], got["top:lsa"], got["top:fuse"]) == (2.0, 0.9, 0.8)
    assert got["bm25_top"] == 2.0  # the best BM25 of any chunk, whichever the final list puts first
    assert "top:versions" not in got          # a reordering, not a score of relevance
    assert got["margin"] == 0.8 - 0.5          # of the last scoring stage
    assert got["agreement"] == 0.0             # bm25 {c0, c1} and lsa {c2}
    # the top chunk is the final ranking's (versions): c1, holding gamma; k = 1
    assert got["term_share"] == got["coverage"] == pytest.approx(ONE / (ONE + ONE))
    assert got["bm25_norm"] == pytest.approx(1.5 / ((ONE + ONE) * 2.5))
    alone = gather(stages[:1], ["alpha"], BM, np.array([2.0, 1.5, 0.0]), position, k=2)
    assert "agreement" not in alone and alone["coverage"] == pytest.approx(1.0)
    assert gather([], ["alpha"], BM, np.zeros(3), position, k=5)["coverage"] == 0.0
