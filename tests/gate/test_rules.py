"""The gate's rules are one table of functions (gate/rules.py, issue 50.5): gate.rule's choices
are its names, a row added to it is chosen by name with no other change, and an unknown name
is a ConfigError that lists the rules."""

from __future__ import annotations

import pytest

from glassrag.config import SETTINGS, Config
from glassrag.errors import ConfigError
from glassrag.gate.calibrate import calibrate, sweep
from glassrag.gate.rules import RULES, Rule, choose, objective, unanswerable_answered


def test_gate_rule_offers_the_table():
    assert SETTINGS["gate.rule"].choices() == tuple(RULES) == ("cost", "balanced", "keep95")


def test_a_row_added_to_the_table_is_chosen_by_name(monkeypatch):
    rows = sweep([2.0, 4.0], [1.0, 3.0])  # thresholds 0, 1.5, 2.5, 3.5, 5
    monkeypatch.setitem(RULES, "highest", Rule(lambda rs, c: max(rs, key=lambda r: r["threshold"]),
                                               unanswerable_answered))
    assert choose(rows, "highest")["threshold"] == 5.0
    assert objective(choose(rows, "highest"), "highest", 1.0) == 1.0 - 1.0  # every unanswerable declined
    assert Config().with_overrides(gate={"rule": "highest"}).gate.rule == "highest"


def test_balanced_is_cost_with_c_1():
    """At t = 2.5: kept 1/2, declined 1/2; cost c·(1 − 1/2) + (1 − 1/2)."""
    row = next(r for r in sweep([2.0, 4.0], [1.0, 3.0]) if r["threshold"] == 2.5)
    assert objective(row, "cost", 3.0) == 3.0 * 0.5 + 0.5
    assert objective(row, "balanced", 3.0) == 1.0 * 0.5 + 0.5


@pytest.mark.parametrize("call", [lambda: choose(sweep([1.0], [0.0]), "bogus"),
                                  lambda: calibrate([{"s": 1.0}] * 5, [{"s": 0.0}] * 5, "bogus", 1.0, "train")])
def test_an_unknown_rule_lists_the_rules(call):
    with pytest.raises(ConfigError) as raised:
        call()
    assert "bogus" in str(raised.value) and "cost, balanced, keep95" in raised.value.hint
