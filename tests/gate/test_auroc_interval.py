"""The AUROC bootstrap above PAIRWISE_MAX pairs, where each resample is ranked on its own
(no test reached that branch: mutation testing, issue 13, docs/testing.md).

One positive (or one negative) stands apart from all the others, so a resample's AUROC is
k / 2001 where k ~ Binomial(2001, 1/2001) ≈ Poisson(1) counts how often it was drawn:
the 2.5th percentile of k is 0 and the 97.5th is 3 (P(k ≤ 2) ≈ 0.920, P(k ≤ 3) ≈ 0.981)."""

from glassrag.stats import PAIRWISE_MAX, auroc, auroc_interval


def test_a_lone_high_positive_among_many_pairs():
    pos, neg = [1.0] + [0.0] * 2000, [0.5] * 2000
    assert len(pos) * len(neg) > PAIRWISE_MAX
    assert auroc(pos, neg) == 1 / 2001
    assert auroc_interval(pos, neg) == (0.0, 3 / 2001)


def test_a_lone_low_negative_among_many_pairs():
    pos, neg = [0.0] * 2000, [-1.0] + [0.5] * 2000
    assert len(pos) * len(neg) > PAIRWISE_MAX
    assert auroc(pos, neg) == 1 / 2001
    assert auroc_interval(pos, neg) == (0.0, 3 / 2001)
