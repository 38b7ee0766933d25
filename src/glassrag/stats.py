"""Statistics for comparing retrieval runs: intervals, paired tests, multiple-test correction;
and the AUROC of a score between two classes, with its bootstrap interval.

Every resampling function takes a seed, so the same inputs always give the same
answer, and draws its resamples in blocks so memory stays bounded for large
query sets.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from glassrag.errors import ConfigError

Z_95 = 1.959963984540054  # Φ⁻¹(0.975), the two-sided 95% normal quantile
_BLOCK_CELLS = 1 << 20  # resampled values held in memory at once


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a proportion p̂ = successes / n:

        (p̂ + z²/2n ± z · sqrt(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n)

    Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22(158):209–212. Unlike the normal interval it stays inside
    [0, 1] and is not empty at 0/n or n/n. n == 0 returns (0.0, 1.0): no data,
    no information.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ConfigError(f"wilson_interval needs 0 ≤ successes ≤ n, got successes={successes}, n={n}",
                          "pass the count of successes and the number of trials")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test on the discordant pairs of a paired binary outcome.

        p = min(1, 2 · P(X ≤ min(b, c))),  X ~ Binomial(b + c, 1/2)

    b counts the queries only system A got right, c those only B got right.
    McNemar (1947), Psychometrika 12(2):153–157; the exact (binomial) form as in
    Fagerland, Lydersen & Laake (2013), BMC Med. Res. Methodol. 13:91.
    b + c == 0 returns 1.0: no discordant pair, no evidence of a difference.
    """
    if b < 0 or c < 0:
        raise ConfigError(f"mcnemar_exact needs counts ≥ 0, got b={b}, c={c}",
                          "pass the numbers of discordant pairs in each direction")
    if b + c == 0:
        return 1.0
    from scipy.stats import binom  # here: scipy.stats costs ~0.5 CPU s to import, and an ask
    # reads this module (the reranker's cross-validation summary) without testing anything

    return min(1.0, 2.0 * float(binom.cdf(min(b, c), b + c, 0.5)))


def _differences(x: Sequence[float], y: Sequence[float], caller: str) -> np.ndarray:
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape or xs.ndim != 1 or len(xs) == 0:
        raise ConfigError(f"{caller} needs two non-empty lists of the same length, "
                          f"got shapes {xs.shape} and {ys.shape}",
                          "pass one value per query for each system, in the same query order")
    return xs - ys


def _blocks(resamples: int, width: int) -> Iterator[int]:
    """Sizes of consecutive blocks of resamples, each about _BLOCK_CELLS values."""
    if resamples < 1:
        raise ConfigError(f"resamples must be ≥ 1, got {resamples}", "use e.g. resamples=10000")
    step = max(1, _BLOCK_CELLS // max(width, 1))
    for start in range(0, resamples, step):
        yield min(step, resamples - start)


def paired_randomization(x: Sequence[float], y: Sequence[float], resamples: int = 10000,
                         seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of mean(x − y) = 0.

    With d_q = x_q − y_q and random signs s_q ∈ {−1, +1}:

        p = (1 + #{r : |mean(s_r · d)| ≥ |mean(d)|}) / (1 + resamples)

    Fisher (1935), The Design of Experiments; recommended for IR by Smucker,
    Allan & Carterette (2007), "A comparison of statistical significance tests
    for information retrieval evaluation", CIKM. The +1 keeps a Monte Carlo
    p-value valid and never 0: Phipson & Smyth (2010), Stat. Appl. Genet. Mol.
    Biol. 9(1). Identical inputs give 1.0.
    """
    d = _differences(x, y, "paired_randomization")
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)  # a relabelling equal to the observed one counts
    rng = np.random.default_rng(seed)
    count = 0
    for size in _blocks(resamples, len(d)):
        signs = rng.integers(0, 2, size=(size, len(d)), dtype=np.int8) * 2 - 1
        count += int(np.count_nonzero(np.abs(signs @ d) / len(d) >= observed - tolerance))
    return (count + 1) / (resamples + 1)


# the draws of a bootstrap of at most this many indices (8 MB) are kept for the next interval
KEPT_DRAWS_MAX = 1_000_000


def _bootstrap_means(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    n = len(values)
    blocks = _draws(n, resamples, seed) if n * resamples <= KEPT_DRAWS_MAX else _drawn(n, resamples, seed)
    return np.concatenate([values[draws].mean(axis=1) for draws in blocks])


def _drawn(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The bootstrap's draws, in blocks of rows of indices; they depend on n and the seed only."""
    rng = np.random.default_rng(seed)
    return (rng.integers(0, n, size=(size, n)) for size in _blocks(resamples, n))


@functools.lru_cache(maxsize=8)
def _draws(n: int, resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    """`_drawn`, kept: the intervals of every metric over the same questions (a run's, a
    sweep's) share them."""
    blocks = tuple(_drawn(n, resamples, seed))
    for b in blocks:
        b.flags.writeable = False
    return blocks


def mean_interval(values: Sequence[float], resamples: int = 10000, seed: int = 0,
                  level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of a mean (for metrics that are not 0/1; use Wilson for those).

        (Q_{α/2}, Q_{1−α/2}) of { mean(v*_r) : r = 1 … resamples },  α = 1 − level

    where v*_r is drawn from `values` with replacement. Efron & Tibshirani
    (1993), An Introduction to the Bootstrap, ch. 13; in IR, Sakai (2006),
    "Evaluating evaluation metrics based on the bootstrap", SIGIR.
    """
    if not 0 < level < 1:
        raise ConfigError(f"level must be between 0 and 1, got {level}", "use e.g. level=0.95")
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) == 0:
        raise ConfigError(f"mean_interval needs a non-empty list of values, got shape {v.shape}",
                          "pass one value per query")
    alpha = 1 - level
    low, high = np.quantile(_bootstrap_means(v, resamples, seed), [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def paired_bootstrap_ci(x: Sequence[float], y: Sequence[float], resamples: int = 10000,
                        seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(x − y), resampling queries as pairs.

    `mean_interval` of d_q = x_q − y_q; the same sources.
    """
    return mean_interval(_differences(x, y, "paired_bootstrap_ci"), resamples, seed, level)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order.

    With p_(1) ≤ … ≤ p_(m) sorted ascending:

        p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j))

    Holm (1979), "A simple sequentially rejective multiple test procedure",
    Scand. J. Statist. 6(2):65–70. Rejecting where p̃ ≤ α controls the
    family-wise error rate at α.
    """
    p = np.asarray(pvalues, dtype=float)
    if p.ndim != 1 or np.any(~((p >= 0) & (p <= 1))):
        raise ConfigError(f"holm needs a list of p-values in [0, 1], got {list(pvalues)!r}",
                          "pass the raw p-values of the tests being corrected")
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted.tolist()


# separation: how well a score tells two classes apart (the gate's calibration, the answerability
# model's held-out AUROC in rerank/cross_train.py, a run's gate table) ---------------------------

def auroc(positive: Sequence[float], negative: Sequence[float],
          weights: Sequence[float] | None = None) -> float:
    """P(score of an answerable > score of an unanswerable) + ½ P(equal), by ranks:
    (R₊ − n₊(n₊ + 1)/2) / (n₊ n₋) with R₊ the rank sum of the positives (mid-ranks for ties).
    With `weights` w_j on the unanswerable questions (each kind of them counting as much as
    another, say), Σ_j w_j (#{p > n_j} + ½ #{p = n_j}) / (n₊ Σ_j w_j)."""
    pos = np.asarray(positive, dtype=np.float64)
    neg = np.asarray(negative, dtype=np.float64)
    if not pos.size or not neg.size:
        return math.nan
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        ordered = np.sort(pos)
        below = np.searchsorted(ordered, neg, side="left")
        at_or_below = np.searchsorted(ordered, neg, side="right")
        wins = (pos.size - at_or_below) + 0.5 * (at_or_below - below)
        return float((w * wins).sum() / (pos.size * w.sum()))
    from scipy.stats import rankdata  # here: scipy.stats costs ~0.3 s to import, and `glassrag
    # calibrate` imports this module before it needs ranks (tests/test_startup.py)

    ranks = rankdata(np.concatenate([pos, neg]))  # mid-ranks: ties share their mean position
    r_pos = ranks[: pos.size].sum()
    return float((r_pos - pos.size * (pos.size + 1) / 2.0) / (pos.size * neg.size))


def auroc_interval(positive: Sequence[float], negative: Sequence[float], resamples: int = 2000,
                   seed: int = 0, weights: Sequence[float] | None = None) -> tuple[float, float]:
    """95 % percentile bootstrap interval, each class resampled on its own (seeded); with
    `weights`, each resample's AUROC is weighted as `auroc` weighs."""
    pos = np.asarray(positive, dtype=np.float64)
    neg = np.asarray(negative, dtype=np.float64)
    if not pos.size or not neg.size:
        return math.nan, math.nan
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if pos.size * neg.size <= PAIRWISE_MAX:
        drawn_pos, drawn_neg = drawn_counts(pos.size, neg.size, resamples, seed)
        if w is None:
            values = resampled_auroc(pos, neg, drawn_pos, drawn_neg)
        else:
            wins = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
            values = ((drawn_pos @ wins) * drawn_neg * w).sum(axis=1) / (pos.size * (drawn_neg @ w))
    else:
        rng = np.random.default_rng(seed)
        values = []
        for _ in range(resamples):
            i, j = rng.integers(0, pos.size, pos.size), rng.integers(0, neg.size, neg.size)
            values.append(auroc(pos[i], neg[j], None if w is None else w[j]))
        values = np.array(values)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


# above this many (answerable, unanswerable) pairs the pairwise table would take too much
# memory (8 bytes a pair) and each resample is ranked on its own instead
PAIRWISE_MAX = 4_000_000


@functools.lru_cache(maxsize=64)
def drawn_counts(n_pos: int, n_neg: int, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """How often each positive and each negative is drawn in each resample (resamples × n):
    the draws depend on the class sizes and the seed only, so intervals of many signals over
    the same questions (a run's gate table, a calibration, a sweep) share them."""
    rng = np.random.default_rng(seed)
    pos, neg = np.zeros((resamples, n_pos)), np.zeros((resamples, n_neg))
    for r in range(resamples):
        pos[r] = np.bincount(rng.integers(0, n_pos, n_pos), minlength=n_pos)
        neg[r] = np.bincount(rng.integers(0, n_neg, n_neg), minlength=n_neg)
    pos.flags.writeable = neg.flags.writeable = False
    return pos, neg


def resampled_auroc(pos: np.ndarray, neg: np.ndarray, drawn_pos: np.ndarray,
                    drawn_neg: np.ndarray) -> np.ndarray:
    """The AUROC of every resample at once, equal to `auroc` of each (Mann-Whitney U):
    with W[i, j] = 1 if pos[i] > neg[j], ½ if equal, 0 if below, and c₊, c₋ the times each
    score was drawn in a resample, AUROC = c₊ᵀ W c₋ / (n₊ n₋)."""
    wins = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    # counts and wins are small integers and halves: every sum is exact, in any order
    return ((drawn_pos @ wins) * drawn_neg).sum(axis=1) / (pos.size * neg.size)
