"""The power of the experiment log's paired tests on its corpora: the smallest difference each
test detects at 80 % power, from each corpus's test-question count and the discordance
observed in the evidence (experiments/results/*.json). Writes bench/results/power.md.

    .venv/bin/python scripts/power.py [--log experiments] [--out bench/results/power.md]

0/1 metric (hit@5), exact McNemar. Of n paired questions a share d is discordant (one arm
right, the other wrong); a true difference delta in the hit rate means a discordant question
is an improvement with probability pi = (d + delta) / (2 d). Given D ~ Binomial(n, d)
discordant pairs, the two-sided exact test rejects when 2 * P(X <= min(k, D - k)) < alpha,
X ~ Binomial(D, 1/2), so

    power(delta) = sum_D Binom(D; n, d) * sum_{k rejected} Binom(k; D, pi)

(Fagerland, Lydersen & Laake 2013, BMC Med. Res. Methodol. 13:91, for the exact test;
the discordance is taken as the median of the experiments' observed ones).

Graded metric (nDCG@10), paired randomisation: by the normal approximation of the paired
mean difference, delta = (z_{1-alpha/2} + z_{0.8}) * s / sqrt(n), s the standard deviation of
the per-question differences (median over the experiments).

Per corpus the level is alpha = 0.05 alone and 0.05 / k under Holm across k corpora (its
most lenient step); pooled, all corpora's questions at alpha = 0.05.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np
from scipy.stats import binom, norm

ALPHA, POWER = 0.05, 0.80
BINARY, GRADED = "answer hit@5", "ranking ndcg@10"
REFERENCE = 0.10  # a discordance to compare corpora at


def mcnemar_power(n: int, d: float, delta: float, alpha: float) -> float:
    """The power of the two-sided exact McNemar test (formula in the module docstring)."""
    if d <= 0 or delta <= 0:
        return 0.0
    pi = min(1.0, (d + delta) / (2 * d))
    total = 0.0
    pd = binom.pmf(np.arange(n + 1), n, d)
    for D in range(1, n + 1):
        k = np.arange(D + 1)
        p = np.minimum(1.0, 2 * binom.cdf(np.minimum(k, D - k), D, 0.5))
        total += pd[D] * binom.pmf(k[p < alpha], D, pi).sum()
    return float(total)


def mcnemar_mde(n: int, d: float, alpha: float) -> float | None:
    """The smallest difference in the hit rate (step 0.005, at most d) with 80 % power."""
    for delta in np.arange(0.005, d + 1e-9, 0.005):
        if mcnemar_power(n, d, float(delta), alpha) >= POWER:
            return float(delta)
    return None


def fewest_flips(alpha: float) -> int:
    """The fewest discordant pairs, all one way, that the exact test calls significant:
    the smallest k with 2 · 2^-k < alpha (k / n is the smallest difference it can ever detect)."""
    k = 1
    while 2 * 0.5 ** k >= alpha:
        k += 1
    return k


def graded_mde(n: int, s: float, alpha: float) -> float:
    return float((norm.ppf(1 - alpha / 2) + norm.ppf(POWER)) * s / np.sqrt(n))


def observed(log: Path) -> dict[str, dict[str, list[float]]]:
    """Per corpus: n and discordance rates of hit@5 (from every evidence file's counts) and
    the sd of nDCG@10 differences (from the evidence that holds per-question figures)."""
    seen: dict[str, dict[str, list[float]]] = {}
    for path in sorted((log / "results").glob("*.json")):
        evidence = json.loads(path.read_text(encoding="utf-8"))
        for corpus, c in evidence["corpora"].items():
            if "skipped" in c:
                continue
            pq = c.get("per_question", {})
            row = seen.setdefault(corpus, {"n": [], "d": [], "s": [], "n_graded": []})
            m = c["metrics"].get(BINARY, {})
            if m.get("measured") and m["n"]:  # rule 1's evidence has the counts too
                row["n"].append(m["n"])
                if m["improved"] + m["degraded"]:  # a change that moved no outcome says nothing of power
                    row["d"].append((m["improved"] + m["degraded"]) / m["n"])
            if GRADED in pq and len(pq[GRADED]["ids"]) > 1:
                diffs = [y - x for x, y in zip(pq[GRADED]["baseline"], pq[GRADED]["change"])]
                row["s"].append(statistics.stdev(diffs))
                row["n_graded"].append(len(diffs))
    return {c: r for c, r in seen.items() if r["d"]}


def fmt(x: float | None) -> str:
    return "not within reach" if x is None else f"{x:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--log", type=Path, default=Path("experiments"))
    ap.add_argument("--out", type=Path, default=Path("bench/results/power.md"))
    ap.add_argument("--corpora", nargs="+", default=["demo", "ml-papers", "economics", "birds", "scifact-abstain"],
                    help="the corpora the log is measured on (pooled, and k of Holm)")
    args = ap.parse_args()
    seen = {c: r for c, r in observed(args.log).items() if c in args.corpora}
    k = len(args.corpora)
    lines = ["# Power of the experiment log's tests", "",
             "<!-- written by scripts/power.py from experiments/results/*.json -->", "",
             f"Smallest difference detected at {POWER:.0%} power; discordance = share of test questions whose "
             f"{BINARY} differs between the two arms, median over the experiments that moved at least one "
             f"outcome ({', '.join(seen)}; Holm across the {k} corpora of the log).", "",
             f"The exact test needs at least {fewest_flips(ALPHA)} questions flipped, all one way, at α 0.05 and "
             f"{fewest_flips(ALPHA / k)} at α 0.05/{k}: the floor column is that count over n, the smallest "
             f"difference the test can detect at all. 'd = {REFERENCE}' assumes a change that flips one "
             "question in ten, a reference for comparing corpora.", "",
             f"| corpus | n ({BINARY}) | observed discordance | floor alone | floor under Holm | "
             f"MDE observed d, alone | MDE observed d, Holm | MDE d = {REFERENCE}, alone | MDE d = {REFERENCE}, Holm | "
             f"sd of {GRADED} diff | MDE {GRADED} alone | MDE {GRADED} Holm |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    pooled_n, pooled_disc, pooled_s = 0, 0.0, []
    for corpus, r in seen.items():
        n, d = int(statistics.median(r["n"])), statistics.median(r["d"])
        s = statistics.median(r["s"]) if r["s"] else None
        ng = int(statistics.median(r["n_graded"])) if r["n_graded"] else n
        pooled_n += n
        pooled_disc += d * n
        if s is not None:
            pooled_s.append((s, ng))
        lines.append(f"| {corpus} | {n} | {d:.3f} | {fewest_flips(ALPHA) / n:.3f} | {fewest_flips(ALPHA / k) / n:.3f} | "
                     f"{fmt(mcnemar_mde(n, d, ALPHA))} | {fmt(mcnemar_mde(n, d, ALPHA / k))} | "
                     f"{fmt(mcnemar_mde(n, REFERENCE, ALPHA))} | {fmt(mcnemar_mde(n, REFERENCE, ALPHA / k))} | "
                     f"{fmt(s) if s is not None else '–'} | "
                     f"{fmt(graded_mde(ng, s, ALPHA)) if s else '–'} | {fmt(graded_mde(ng, s, ALPHA / k)) if s else '–'} |")
    d = pooled_disc / pooled_n
    ng = sum(n for _, n in pooled_s)
    s = float(np.sqrt(sum(s * s * n for s, n in pooled_s) / ng)) if pooled_s else None
    lines.append(f"| **pooled** | {pooled_n} | {d:.3f} | {fewest_flips(ALPHA) / pooled_n:.3f} | – | "
                 f"{fmt(mcnemar_mde(pooled_n, d, ALPHA))} | – | {fmt(mcnemar_mde(pooled_n, REFERENCE, ALPHA))} | – | "
                 f"{fmt(s) if s else '–'} | {fmt(graded_mde(ng, s, ALPHA)) if s else '–'} | – |")
    lines += ["", "A difference smaller than the MDE can be real, but the test misses it more often than one time "
              "in five; the pooled test reaches the smallest one, which is why rule 2 decides on it "
              "(docs/verdict-rule.md)."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
