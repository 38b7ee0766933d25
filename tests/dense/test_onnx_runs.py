"""How the ONNX backend cuts texts into session runs and pools token vectors: pure
functions, no model (glassrag/dense/onnx_embed.py)."""

from __future__ import annotations

import numpy as np

from glassrag.dense.onnx_embed import RUN_TOKENS, pool, runs


def as_lists(groups: list[np.ndarray]) -> list[list[int]]:
    return [g.tolist() for g in groups]


def test_runs_are_longest_first_and_hold_at_most_the_token_budget():
    lengths = np.array([10, 256, 100, 100, 3, 50, 200])
    # 256 alone; 200 alone (2 * 200 > 256); 2 * 100 <= 256 < 3 * 100; then 50 leads: 256 // 50 = 5 >= 3 left
    assert as_lists(runs(lengths, 32, 256)) == [[1], [6], [2, 3], [5, 0, 4]]


def test_a_run_holds_at_most_most_texts_and_at_least_one():
    assert as_lists(runs(np.array([5] * 10), 4, 256)) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert as_lists(runs(np.array([300, 300]), 32, 256)) == [[0], [1]]  # longer than the budget: alone
    assert as_lists(runs(np.array([128, 128, 128]), 32, 256)) == [[0, 1], [2]]  # 2 * 128 == 256 fits
    assert runs(np.array([], dtype=np.int64), 32) == []


def test_equal_lengths_keep_their_input_order_and_the_default_budget_is_one_full_window():
    assert as_lists(runs(np.array([7, 9, 7, 9]), 32, 18)) == [[1, 3], [0, 2]]
    assert RUN_TOKENS == 256


def test_mean_pooling_counts_only_masked_tokens_then_unit_length():
    hidden = np.array([[[3.0, 0.0], [1.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]])
    mean = np.array([(3 + 1) / 2, (0 + 4) / 2])  # (2, 2), length 2·√2
    np.testing.assert_allclose(pool(hidden, mask, "mean"), [mean / np.sqrt(8)], rtol=1e-6)
    np.testing.assert_allclose(pool(hidden, mask, "cls"), [[1.0, 0.0]], rtol=1e-6)  # (3, 0) / 3
