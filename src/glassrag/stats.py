"""Statistics for comparing retrieval runs: intervals, paired tests, multiple-test correction.

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
