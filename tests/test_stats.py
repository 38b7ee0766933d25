"""Statistics: closed forms computed here, scipy for exact tests, and behaviour of the resampling tests."""

from __future__ import annotations

from math import sqrt

import numpy as np
import pytest
from scipy.stats import binomtest

from glassrag.errors import ConfigError
from glassrag.stats import (
    KEPT_DRAWS_MAX,
    holm,
    mcnemar_exact,
    mean_interval,
    paired_bootstrap_ci,
    paired_randomization,
    wilson_interval,
)

Z = 1.959963984540054


def test_wilson_8_of_10_matches_the_closed_form() -> None:
    p, n = 8 / 10, 10
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z * sqrt(p * (1 - p) / n + Z**2 / (4 * n**2)) / (1 + Z**2 / n)
    assert wilson_interval(8, 10) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 10)
    assert low == pytest.approx(0.0, abs=1e-12) and 0 < high < 1
    low, high = wilson_interval(10, 10)
    assert 0 < low < 1 and high == pytest.approx(1.0, abs=1e-12)
    narrow, wide = wilson_interval(8, 10, z=1.0), wilson_interval(8, 10)
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    with pytest.raises(ConfigError):
        wilson_interval(11, 10)


@pytest.mark.parametrize("b, c", [(0, 1), (1, 0), (3, 3), (2, 9), (9, 2), (10, 25), (0, 12), (40, 41)])
def test_mcnemar_exact_matches_scipy_binomtest(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_mcnemar_exact_hand_case_and_edges() -> None:
    # b=0, c=3: P(X ≤ 0) = 1/2³, doubled.
    assert mcnemar_exact(0, 3) == pytest.approx(2 * (1 / 2**3))
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 5) == 1.0
    with pytest.raises(ConfigError):
        mcnemar_exact(-1, 2)


def test_randomization_clear_difference_and_identical() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(0.6, 0.1, 50)
    y = rng.normal(0.4, 0.1, 50)
    assert paired_randomization(x, y) < 0.01
    assert paired_randomization(x, y) >= 1 / (10000 + 1)
    assert paired_randomization(x, x) == 1.0
    assert paired_randomization(list(x), list(x), resamples=100) == 1.0


def test_randomization_is_seeded_symmetric_and_plausible_under_no_effect() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.random(30), rng.random(30)
    p = paired_randomization(x, y, seed=4)
    assert p == paired_randomization(x, y, seed=4)
    assert p == paired_randomization(y, x, seed=4)
    assert p > 0.05


def test_randomization_small_sample_equals_exact_test() -> None:
    # d = (1, 1, 1): only the all-positive and all-negative flips of 8 reach |mean| = 1, so p → 2/8.
    p = paired_randomization([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], resamples=200000)
    assert p == pytest.approx(2 / 8, abs=0.005)


def test_paired_tests_reject_mismatched_inputs() -> None:
    with pytest.raises(ConfigError):
        paired_randomization([1.0, 2.0], [1.0])
    with pytest.raises(ConfigError):
        paired_bootstrap_ci([], [])
    with pytest.raises(ConfigError):
        paired_randomization([1.0], [2.0], resamples=0)


def test_holm_known_example() -> None:
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([3 * 0.01, 2 * 0.03, 2 * 0.03])


def test_holm_caps_keeps_order_and_is_monotone() -> None:
    assert holm([0.5, 0.01]) == pytest.approx([min(1.0, 1 * 0.5), 2 * 0.01])
    assert holm([0.4, 0.6]) == pytest.approx([min(1.0, 2 * 0.4), min(1.0, 2 * 0.4)])
    assert holm([]) == []
    assert holm([0.02]) == pytest.approx([0.02])
    raw = [0.2, 0.001, 0.04, 0.03, 0.5]
    adjusted = holm(raw)
    order = np.argsort(raw)
    assert all(np.diff(np.asarray(adjusted)[order]) >= 0)
    assert all(a >= p for a, p in zip(adjusted, raw))
    with pytest.raises(ConfigError):
        holm([0.1, 1.5])


def test_bootstrap_ci_contains_a_constant_shift() -> None:
    x = np.random.default_rng(3).random(40)
    y = x - 0.25
    low, high = paired_bootstrap_ci(x, y)
    assert low - 1e-12 <= 0.25 <= high + 1e-12
    assert high - low < 1e-9


def test_bootstrap_ci_contains_the_observed_mean_and_narrows_with_level() -> None:
    rng = np.random.default_rng(4)
    x = rng.random(60)
    y = x - 0.1 + rng.normal(0, 0.05, 60)
    observed = float(np.mean(x - y))
    low, high = paired_bootstrap_ci(x, y)
    assert low < observed < high
    narrow = paired_bootstrap_ci(x, y, level=0.5)
    assert low < narrow[0] < narrow[1] < high
    assert paired_bootstrap_ci(x, y, seed=9) == paired_bootstrap_ci(x, y, seed=9)


def test_mean_interval() -> None:
    values = np.random.default_rng(5).random(80)
    low, high = mean_interval(values)
    assert low < float(np.mean(values)) < high
    assert mean_interval([0.5] * 10) == pytest.approx((0.5, 0.5))
    assert mean_interval(values, seed=1) == mean_interval(values, seed=1)
    assert type(mean_interval(values)[0]) is float
    with pytest.raises(ConfigError):
        mean_interval([])
    with pytest.raises(ConfigError):
        mean_interval(values, level=1.5)


# Mutation testing (issue 13, docs/testing.md) found these contracts unpinned.

def test_paired_tests_reject_empty_lists_and_name_themselves() -> None:
    for test in (paired_randomization, paired_bootstrap_ci):
        with pytest.raises(ConfigError, match=f"^{test.__name__} needs two non-empty lists"):
            test([], [])


def test_one_resample_is_enough_to_run() -> None:
    # p = (1 + count) / (1 + 1) with count 0 or 1
    assert paired_randomization([1.0, 0.0], [0.0, 0.0], resamples=1) in (0.5, 1.0)
    low, high = mean_interval([0.2, 0.4], resamples=1)
    assert low == high and min(abs(low - v) for v in (0.2, 0.3, 0.4)) < 1e-12
    with pytest.raises(ConfigError, match="resamples must be ≥ 1, got 0"):
        paired_randomization([1.0], [0.0], resamples=0)


def test_the_default_seed_is_zero() -> None:
    """Stored runs and experiment evidence carry p-values and intervals computed with the
    defaults: the default seed must stay 0 for them to reproduce."""
    x = [0.1, 0.9, 0.4, 0.7, 0.3, 1.0, 0.0, 0.6]
    y = [0.2, 0.5, 0.4, 0.1, 0.3, 0.8, 0.2, 0.1]
    assert paired_randomization(x, y, resamples=200) == paired_randomization(x, y, resamples=200, seed=0)
    assert paired_bootstrap_ci(x, y, resamples=200) == paired_bootstrap_ci(x, y, resamples=200, seed=0)
    assert paired_bootstrap_ci(x, y) == paired_bootstrap_ci(x, y, resamples=10000, seed=0)


def test_randomization_counts_every_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """With resamples drawn in blocks, the count adds up over all of them: identical systems
    give p = 1 whatever the block size."""
    import glassrag.stats as stats

    monkeypatch.setattr(stats, "_BLOCK_CELLS", 8)  # 2 resamples of 4 queries a block
    assert paired_randomization([0.5, 0.1, 0.9, 0.3], [0.5, 0.1, 0.9, 0.3], resamples=101) == 1.0


def test_bootstrap_draws_not_kept_are_still_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above KEPT_DRAWS_MAX the draws are made afresh each time: from the seed, not the clock."""
    import glassrag.stats as stats

    monkeypatch.setattr(stats, "KEPT_DRAWS_MAX", 0)
    values = np.random.default_rng(5).random(50)
    assert mean_interval(values, resamples=300, seed=3) == mean_interval(values, resamples=300, seed=3)
    assert paired_bootstrap_ci(values, values[::-1], resamples=300) == \
        paired_bootstrap_ci(values, values[::-1], resamples=300)


def test_holm_takes_a_p_value_of_zero() -> None:
    assert holm([0.0, 0.04]) == [0.0, 0.04]


def test_mean_interval_is_the_percentile_bootstrap_written_out() -> None:
    """The interval equals the 2.5th and 97.5th percentiles of the means of `resamples` draws
    with replacement from default_rng(seed), whether the draws are kept or not."""
    values = np.random.default_rng(7).random(30)
    draws = np.random.default_rng(4).integers(0, 30, size=(500, 30))
    expected = tuple(np.quantile(values[draws].mean(axis=1), [0.025, 0.975]))
    assert mean_interval(values, resamples=500, seed=4) == pytest.approx(expected, abs=1e-15)
    assert mean_interval(values, resamples=500, seed=4, level=0.9) == pytest.approx(
        tuple(np.quantile(values[draws].mean(axis=1), [0.05, 0.95])), abs=1e-15)


def test_mean_interval_defaults_and_level_bounds() -> None:
    values = np.random.default_rng(8).random(50)
    assert mean_interval(values) == mean_interval(values, resamples=10000, seed=0, level=0.95)
    other = values[::-1] * 0.9
    assert paired_bootstrap_ci(values, other) == paired_bootstrap_ci(values, other, resamples=10000, seed=0)
    for level in (0.0, 1.0, 1.5):
        with pytest.raises(ConfigError, match="level must be between 0 and 1"):
            mean_interval(values, level=level)


@pytest.mark.parametrize("call, problem, hint", [
    (lambda: wilson_interval(3, 2), "wilson_interval needs 0 ≤ successes ≤ n, got successes=3, n=2",
     "pass the count of successes and the number of trials"),
    (lambda: wilson_interval(0, -1), "wilson_interval needs 0 ≤ successes ≤ n, got successes=0, n=-1",
     "pass the count of successes and the number of trials"),
    (lambda: mcnemar_exact(-1, 2), "mcnemar_exact needs counts ≥ 0, got b=-1, c=2",
     "pass the numbers of discordant pairs in each direction"),
    (lambda: paired_randomization([1.0], [1.0, 2.0]),
     "paired_randomization needs two non-empty lists of the same length, got shapes (1,) and (2,)",
     "pass one value per query for each system, in the same query order"),
    (lambda: paired_bootstrap_ci([], []),
     "paired_bootstrap_ci needs two non-empty lists of the same length, got shapes (0,) and (0,)",
     "pass one value per query for each system, in the same query order"),
    (lambda: paired_randomization([1.0], [2.0], resamples=0), "resamples must be ≥ 1, got 0",
     "use e.g. resamples=10000"),
    (lambda: mean_interval([1.0], level=1.0), "level must be between 0 and 1, got 1.0", "use e.g. level=0.95"),
    (lambda: mean_interval([]), "mean_interval needs a non-empty list of values, got shape (0,)",
     "pass one value per query"),
    (lambda: holm([0.5, 1.5]), "holm needs a list of p-values in [0, 1], got [0.5, 1.5]",
     "pass the raw p-values of the tests being corrected"),
])
def test_each_error_says_what_was_wrong_and_what_to_pass(call, problem, hint):
    with pytest.raises(ConfigError) as err:
        call()
    assert (err.value.problem, err.value.hint) == (problem, hint)


def test_holm_caps_at_one_and_takes_a_p_value_of_one():
    assert holm([0.6, 0.7]) == [1.0, 1.0]  # 2 × 0.6 = 1.2, capped
    assert holm([1.0]) == [1.0]


def test_the_bootstrap_draws_every_value_when_the_draws_are_too_many_to_keep():
    # 2 × 600,000 draws are more than KEPT_DRAWS_MAX: drawn in blocks, not kept. A resample
    # of two values takes the first twice, once, or not at all (¼, ½, ¼): the means 100,
    # 50, 0, so the 95 % interval is the whole range
    assert 2 * 600_000 > KEPT_DRAWS_MAX
    assert mean_interval([100.0, 0.0], resamples=600_000) == (0.0, 100.0)
