"""Whether `rerank.method = auto` uses the learned reranker (issue 27, item 3): only when its
cross-validation on the train split beats the order it is given (rerank/learned_cv.py)."""

from __future__ import annotations

import numpy as np
import pytest

from glassrag.pipeline import Pipeline, auto_reranker
from glassrag.rerank.learned_cv import FOLDS, cross_validate, decide, reciprocal_rank, summary


def test_reciprocal_rank_counts_the_first_relevant_row_of_the_order():
    labels = np.array([0.0, 0.0, 1.0, 1.0])
    assert reciprocal_rank(labels, np.arange(4)) == 1 / 3
    assert reciprocal_rank(labels, np.array([3, 0, 1, 2])) == 1 / 1
    assert reciprocal_rank(labels, np.arange(4), depth=2) == 0.0  # the first relevant is third
    assert reciprocal_rank(np.zeros(3), np.arange(3)) == 0.0


def _pools(questions: int, signal: bool, relevant_at: int, size: int = 4, seed: int = 0):
    """`questions` pools of `size` rows, the relevant one at input position `relevant_at`;
    feature 0 marks it when `signal`, else it is noise."""
    rng = np.random.default_rng(seed)
    x, y, groups = [], [], []
    for q in range(questions):
        rows = rng.standard_normal((size, 2))
        labels = np.zeros(size)
        labels[relevant_at] = 1.0
        if signal:
            rows[:, 0] = labels * 3.0 + 0.1 * rng.standard_normal(size)
        x.append(rows)
        y.extend(labels)
        groups.extend([f"q{q}"] * size)
    return np.vstack(x), np.asarray(y), np.asarray(groups)


def test_a_feature_that_finds_the_answer_the_order_buries_helps():
    x, y, groups = _pools(20, signal=True, relevant_at=3)
    cv = cross_validate(x, y, groups)
    # without it the answer is 4th everywhere (RR 1/4); out of fold the model puts it first
    assert cv["none"] == pytest.approx(1 / 4) and cv["learned"] == pytest.approx(1.0)
    assert cv["diff"] == pytest.approx(1 - 1 / 4) and cv["low"] > 0
    assert cv["helps"] and (cv["improved"], cv["degraded"], cv["questions"]) == (20, 0, 20)


def test_noise_against_an_order_that_is_already_right_does_not_help():
    x, y, groups = _pools(20, signal=False, relevant_at=0)
    cv = cross_validate(x, y, groups)
    assert cv["none"] == 1.0 and cv["learned"] <= 1.0 and not cv["helps"]
    assert "reaches 0" in cv["why"]


def test_an_interval_that_touches_zero_is_not_help():
    # one question better by 1/2 and nineteen unchanged: the bootstrap's lower end is 0
    before = [0.5] + [1.0] * 19
    after = [1.0] * 20
    cv = decide(before, after)
    assert cv["diff"] == pytest.approx(0.5 / 20) and cv["low"] == 0.0 and not cv["helps"]
    assert decide([0.5] * 20, [1.0] * 20)["helps"]  # better on every question: above 0


def test_fewer_questions_than_folds_cannot_show_help():
    cv = decide([0.5] * (FOLDS - 1), [1.0] * (FOLDS - 1))
    assert not cv["helps"] and cv["diff"] is None and f"needs at least {FOLDS}" in cv["why"]


def test_questions_without_a_relevant_candidate_are_left_out():
    x, y, groups = _pools(10, signal=True, relevant_at=2)
    empty = np.zeros((4, 2))
    cv = cross_validate(np.vstack([x, empty]), np.append(y, np.zeros(4)),
                        np.append(groups, ["none"] * 4))
    assert cv["questions"] == 10


@pytest.mark.parametrize("cv, method, said", [
    (None, "none", "not using the trained learned reranker: trained before its cross-validation was "
                   "recorded (run glassrag rerank-train again)"),
    ({"helps": False, "diff": 0.007, "low": -0.005, "high": 0.026, "folds": 5, "metric": "mrr@10",
      "questions": 62, "why": ""}, "none", "not using the trained learned reranker: by 5-fold"),
    ({"helps": True, "diff": 0.2, "low": 0.1, "high": 0.3, "folds": 5, "metric": "mrr@10",
      "questions": 62, "why": ""}, "learned", "using the trained learned reranker: by 5-fold"),
])
def test_auto_reads_the_decision_stored_with_the_model(cv, method, said):
    model = {"weights": [0.0]} if cv is None else {"weights": [0.0], "cv": cv}
    used, why = auto_reranker(model)
    assert used == method and why.startswith(said)
    assert auto_reranker(None) == ("none", "no reranker trained for this index (glassrag rerank-train)")


def test_the_pipeline_runs_the_reranker_only_when_it_helps(index):
    from glassrag.rerank.features import FEATURES

    d = len(FEATURES)
    model = {"features": list(FEATURES), "mean": [0.0] * d, "std": [1.0] * d, "weights": [0.1] * d,
             "bias": 0.0, "l2": 1.0, "rows": 1, "positives": 1}
    helps = {"helps": True, "diff": 0.2, "low": 0.1, "high": 0.3, "folds": 5, "metric": "mrr@10",
             "questions": 30, "why": ""}
    for cv, expected in ((helps, ["rerank"]), ({**helps, "helps": False, "low": -0.1}, [])):
        index.extra["reranker"] = {**model, "cv": cv}
        pipe = Pipeline(index, index.config.with_overrides(rerank={"method": "auto"}))
        assert [s.name for s in pipe.stages if s.kind == "rerank"] == expected
        answer = pipe.run("tilt")
        assert [t.name for t in answer.trace if t.kind == "rerank"] == expected
        note = answer.stage("analyze").notes[-1]
        assert note.startswith("rerank auto: " + ("using" if expected else "not using"))
        assert "MRR@10" in note and summary(cv) in note
