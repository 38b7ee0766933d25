"""What a calibration is valid for (gate/threshold.scoring_settings): the trained reranker
enters by a digest of the whole model, and only when it is the reranker used (issue 13: the
re-run's survivors in the digest)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from glassrag.config import SCORING, SETTINGS, Config
from glassrag.gate.threshold import Gate, scoring_settings

MODEL = {"weights": [0.5, -1.0], "bias": 0.25, "mean": [1.0, 2.0], "std": [1.0, 1.0], "pool": 20}


def test_the_digest_covers_the_weights_the_bias_and_the_mean():
    got = scoring_settings(Config(), MODEL, "learned")
    # by hand: the first 12 hex digits of sha256 over [weights, bias, mean] as JSON
    expected = hashlib.sha256(json.dumps([[0.5, -1.0], 0.25, [1.0, 2.0]]).encode()).hexdigest()[:12]
    assert got["rerank.used"] == "learned" and got["rerank.trained"] == expected
    for change in ({"weights": [0.5, -0.9]}, {"bias": 0.3}, {"mean": [1.0, 2.5]}):
        assert scoring_settings(Config(), {**MODEL, **change}, "learned")["rerank.trained"] != expected, change
    # what the digest leaves out changes nothing the scores depend on here
    assert scoring_settings(Config(), {**MODEL, "pool": 10}, "learned")["rerank.trained"] == expected


def test_a_model_that_is_not_used_is_not_in_the_settings():
    for method in ("none", "cross-encoder"):
        got = scoring_settings(Config(), MODEL, method)
        assert got["rerank.used"] == method and "rerank.trained" not in got
    assert "rerank.trained" not in scoring_settings(Config(), None, "learned")


def test_the_settings_are_flat_json_values_with_the_answer_s_k():
    got = scoring_settings(Config().with_overrides(answer={"k": 3}), None, "none")
    assert got["answer.k"] == 3 and got["bm25.k1"] == Config().bm25.k1
    assert got["retrieve.retrievers"] == list(Config().retrieve.retrievers)  # a list, as stored
    assert json.loads(json.dumps(got)) == got


# settings that change no score the gate reads, each with the reason; every other setting must
# say `scores=True` in its definition (config.py), so the gate's list is derived, not kept by hand
NO_GATE_SCORE = {
    "answer.excerpt_chars": "what is shown of a passage, after the gate",
    "answer.neighbours": "the text a passage is shown within, after the gate",
    "answer.budget_words": "the reader's budget, after the gate",
    "gate.enabled": "the gate's own switch",
    "gate.rule": "how calibrate picks the threshold",
    "gate.cost": "how calibrate picks the threshold",
    "gate.score": "which score calibrate fits (evaluate/fits.py checks it beside rule and cost)",
    "gate.offtopic": "which questions calibrate reads",
    "gate.offtopic_keep": "where calibrate puts the second threshold (evaluate/fits.py checks it)",
    "gate.on_topic_min": "which questions calibrate fits the first threshold on (evaluate/fits.py checks it)",
    "gate.signals": "which signals calibrate's combination reads; the calibration keeps its own list (evaluate/fits.py checks it)",
    "gate.answerability": "stored as a digest of the model's file instead (scoring_settings)",
    "gate.answerability_depth": "stored beside that digest when the model is read (scoring_settings)",
}


def _other(value):
    """A different value of the same type (the check compares values; no range needed)."""
    if isinstance(value, bool):
        return not value
    if value is None:
        return 0.5
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [*value, "other"]
    return f"{value}-other"


def test_every_setting_either_changes_scores_or_says_why_not():
    undecided = [n for n, s in SETTINGS.items()
                 if not s.scores and n not in NO_GATE_SCORE and not n.startswith("generate.")]
    assert not undecided, f"say scores=True in config.py, or add the reason here: {undecided}"
    assert not [n for n in NO_GATE_SCORE if SETTINGS[n].scores]


def test_the_gate_list_is_the_settings_that_change_scores():
    got = scoring_settings(Config(), None, "none")
    assert set(got) == set(SCORING) | {"rerank.used", "gate.answerability"}
    assert set(SCORING) == {n for n, s in SETTINGS.items() if s.scores}
    # the query-time settings of the pg-* retrievers (issue 29: the hand-kept list left them out)
    assert {"postgres.ef_search", "postgres.hybrid_cutoff", "postgres.dense"} <= set(got)
    assert "answer.k" in got and "answer.excerpt_chars" not in got


@pytest.mark.parametrize("name", SCORING)
def test_every_score_changing_setting_invalidates_a_calibration(name):
    base = Config()
    section, key = name.split(".", 1)
    now = replace(base, **{section: replace(getattr(base, section), **{key: _other(base.value(name))})})
    calibration = {"settings": scoring_settings(base, None, "none"), "separable": True, "threshold": 0.5,
                   "score": {"kind": "signal", "name": "top"}, "auroc": {"auroc": 0.9, "low": 0.8, "high": 1.0}}
    gate = Gate(calibration, scoring_settings(now, None, "none"))
    assert [s.split(" was ")[0] for s in gate.stale] == [name]
    assert not gate.active
    assert Gate(calibration, scoring_settings(base, None, "none")).active


def test_a_postgres_setting_makes_the_gate_pass_every_question():
    base = Config()
    calibration = {"settings": scoring_settings(base, None, "none"), "separable": True, "threshold": 0.5,
                   "score": {"kind": "signal", "name": "top"}, "auroc": {"auroc": 0.9, "low": 0.8, "high": 1.0}}
    now = base.with_overrides(postgres={"ef_search": 100})
    declined, why = Gate(calibration, scoring_settings(now, None, "none")).decide({"top": 0.0})
    assert not declined and "postgres.ef_search was 40, now 100" in why
