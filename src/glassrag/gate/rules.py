"""The gate's rules: how `glassrag calibrate` picks the threshold among the rows of a sweep
(gate/calibrate.py `sweep`: one row a candidate threshold t, with kept(t), declined(t) and
cost(t)), and what it minimises there, which ranks one candidate score against another.

A rule is a `Rule` of two functions, looked up by name in RULES (`gate.rule`'s choices, and
`glassrag calibrate --rule`'s, are read from it). With kept(t) the share of found answers whose
score is ≥ t and declined(t) the share of unanswerable questions whose score is < t:

    cost      the t of least c · (1 − kept(t)) + (1 − declined(t)), c = `gate.cost` (ties: the
              lower t, which keeps more answers); minimises that cost
    balanced  cost with c = 1: the t of greatest balanced accuracy (kept + declined) / 2
    keep95    the highest t that keeps at least 95 % of the found answers; minimises the share
              of unanswerable questions answered, 1 − declined(t)

Adding a rule is its two functions and its row here. The gate stage reads only the threshold
the calibration stored, so it needs no change.

This module imports nothing heavy: `glassrag calibrate --help` lists RULES without numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from glassrag.errors import ConfigError

Row = Mapping[str, float]  # one threshold of a sweep: threshold, answerable_kept, unanswerable_declined, ...


@dataclass(frozen=True)
class Rule:
    """pick(rows, c) -> the row of the threshold it picks; objective(row, c) -> what it
    minimises at that row (lower is better; `calibrate` compares candidate scores by it)."""

    pick: Callable[[Sequence[Row], float], Row]
    objective: Callable[[Row, float], float]


def weighted_cost(row: Row, c: float) -> float:
    """c · (1 − kept) + (1 − declined): a wrongly declined answer counts c times an answered
    unanswerable question."""
    return c * (1.0 - row["answerable_kept"]) + (1.0 - row["unanswerable_declined"])


def least_cost(rows: Sequence[Row], c: float) -> Row:
    """The row of least `weighted_cost`, the lower threshold on a tie."""
    return min(rows, key=lambda r: (weighted_cost(r, c), r["threshold"]))


def highest_keeping_95(rows: Sequence[Row], c: float) -> Row:
    """The row of the highest threshold whose kept share is ≥ 0.95 (c is not read)."""
    return max((r for r in rows if r["answerable_kept"] >= 0.95), key=lambda r: r["threshold"])


def unanswerable_answered(row: Row, c: float) -> float:
    """1 − declined: the share of unanswerable questions the gate lets through (c is not read)."""
    return 1.0 - row["unanswerable_declined"]


RULES: dict[str, Rule] = {
    "cost": Rule(least_cost, weighted_cost),
    "balanced": Rule(lambda rows, c: least_cost(rows, 1.0), lambda row, c: weighted_cost(row, 1.0)),
    "keep95": Rule(highest_keeping_95, unanswerable_answered),
}


def rule_named(name: str) -> Rule:
    """The rule called `name`; a ConfigError naming the rules there are."""
    if name not in RULES:
        raise ConfigError(f"unknown calibration rule {name!r}", f"choose one of: {', '.join(RULES)}")
    return RULES[name]


def choose(rows: Sequence[Row], rule: str = "cost", cost: float = 1.0) -> Row:
    """The row rule `rule` picks among `rows` with c = `cost`."""
    return rule_named(rule).pick(rows, cost)


def objective(row: Row, rule: str, cost: float) -> float:
    """What rule `rule` minimises at `row` with c = `cost`."""
    return rule_named(rule).objective(row, cost)
