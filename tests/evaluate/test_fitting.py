"""What a workbench fits on the train split for a configuration (evaluate/fitting.py), on the
four-file handbook: the sweep's fitting (a gate calibrated once per setting it does not fit),
the experiment log's (each configuration fitted for itself) and the index as built."""

from __future__ import annotations

import pytest

from glassrag.config import Config
from glassrag.evaluate.fitting import AS_BUILT, EXPERIMENT, SWEEP, Fitting, calibrated, reranked
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.evaluate.variant import Variant, variant_for
from glassrag.store.base import Index

from tests.evaluate.test_variant import CONFIG, QUESTIONS, handbook, with_gate  # noqa: F401 (a fixture)

K1 = CONFIG.with_overrides(bm25={"k1": 0.9})


def fit(fitting: Fitting, variant: Variant, config: Config) -> tuple[Index, str]:
    return calibrated(fitting, variant, variant.index, config, QUESTIONS, "hand.jsonl")


def test_a_fitting_is_one_of_the_named_choices():
    assert (SWEEP, EXPERIMENT, AS_BUILT) == (Fitting("index", "refit"), Fitting("config", "config"),
                                              Fitting("index", "index"))
    with pytest.raises(ValueError, match="no such fitting"):
        Fitting("always", "refit")
    with pytest.raises(ValueError, match="no such fitting"):
        Fitting("index", "always")


# ------------------------------------------------------------------- the sweep's: refit


def test_an_index_without_a_gate_is_used_as_it_is(handbook):
    variant = variant_for(handbook, "here", "none")
    index, how = fit(SWEEP, variant, K1)
    assert (index, how) == (handbook, "none") and index is handbook


def test_an_index_calibrated_for_these_settings_keeps_its_gate(handbook):
    variant = variant_for(with_gate(handbook), "here", "none")
    index, how = fit(SWEEP, variant, CONFIG)
    assert how == "index" and index is variant.index and variant.calibrations == {}
    # under another rule than cost, the cost does not matter
    balanced = CONFIG.with_overrides(gate={"rule": "balanced"})
    variant = variant_for(with_gate(handbook, balanced), "here", "none")
    assert fit(SWEEP, variant, balanced.with_overrides(gate={"cost": 9.0}))[1] == "index"


@pytest.mark.parametrize("other", [{"bm25": {"k1": 0.9}}, {"gate": {"rule": "balanced"}},
                                   {"gate": {"cost": 9.0}}, {"gate": {"score": "auto"}}])
def test_other_settings_rule_cost_or_score_calibrate_on_the_train_split(handbook, other):
    variant = variant_for(with_gate(handbook), "here", "all")
    config = CONFIG.with_overrides(**other)
    index, how = fit(SWEEP, variant, config)
    assert how == "train" and index is not variant.index
    gate, reader = calibrate_index(handbook, config, QUESTIONS, config.gate.rule, "hand.jsonl")
    assert (index.extra["gate"], index.extra["reader"]) == (gate, reader)
    assert index.chunks is variant.index.chunks  # the same index, another calibration
    assert set(index.extra) == set(variant.index.extra)
    # made with the variant's stage cache and judge
    assert len(variant.cache) > 0 and set(variant.judge._judged) == {"sensor", "battery"}


def test_a_calibration_is_made_once_per_settings_rule_cost_score_and_budget(handbook):
    variant = variant_for(with_gate(handbook), "here", "none")
    first, _ = fit(SWEEP, variant, K1)
    assert fit(SWEEP, variant, K1) == (first, "train")
    assert fit(SWEEP, variant, K1)[0] is first
    assert len(variant.calibrations) == 1
    for n, other in enumerate([{"answer": {"budget_words": 500}}, {"gate": {"cost": 9.0}},
                               {"gate": {"rule": "balanced"}}, {"bm25": {"k1": 0.8}},
                               {"gate": {"score": "auto"}}], 2):
        index, how = fit(SWEEP, variant, K1.with_overrides(**other))
        assert how == "train" and index is not first and len(variant.calibrations) == n


# ------------------------------------------------------------------ the index as built


def test_as_built_the_index_is_used_as_it_is_whatever_its_calibration(handbook):
    for index in (handbook, with_gate(handbook)):
        variant = variant_for(index, "here", "none")
        assert fit(AS_BUILT, variant, K1) == (variant.index, "index")
        assert reranked(AS_BUILT, variant, K1.with_overrides(rerank={"method": "learned"}), QUESTIONS,
                        "hand.jsonl") is variant.index


# ------------------------------------------------------- the experiment log's: per config


def test_each_configuration_with_the_gate_on_is_calibrated_for_itself(handbook):
    variant = variant_for(handbook, "here", "stages")
    index, how = fit(EXPERIMENT, variant, K1)
    gate, reader = calibrate_index(handbook, K1, QUESTIONS, K1.gate.rule, "hand.jsonl")
    assert how == "train" and (index.extra["gate"], index.extra["reader"]) == (gate, reader)
    assert variant.calibrations == {}  # kept by the workbench per configuration, not per settings
    # the gate off, or no unanswerable train question to calibrate on: nothing is calibrated
    off = K1.with_overrides(gate={"enabled": False})
    assert fit(EXPERIMENT, variant, off) == (handbook, "none")
    answerable = [q for q in QUESTIONS if q.answerable]
    assert calibrated(EXPERIMENT, variant, handbook, K1, answerable, "hand.jsonl") == (handbook, "none")
    # a calibration of the index that fits is reused
    own = variant_for(with_gate(handbook), "here", "none")
    assert fit(EXPERIMENT, own, CONFIG) == (own.index, "index")
    assert fit(EXPERIMENT, own, off) == (own.index, "index")


def test_a_reranker_is_trained_for_each_configuration_that_reads_one(handbook):
    variant = variant_for(handbook, "here", "stages")
    for method in ("learned", "auto"):
        config = CONFIG.with_overrides(rerank={"method": method})
        index = reranked(EXPERIMENT, variant, config, QUESTIONS, "hand.jsonl")
        assert index.extra["reranker"] == train_reranker(handbook, config, QUESTIONS, "hand.jsonl")
        assert "reranker" not in variant.index.extra  # the variant's index is left as it is
    assert reranked(EXPERIMENT, variant, CONFIG, QUESTIONS, "hand.jsonl") is variant.index  # method none
    learned = CONFIG.with_overrides(rerank={"method": "learned"})
    assert reranked(SWEEP, variant, learned, QUESTIONS, "hand.jsonl") is variant.index  # the index's own
