import numpy as np
import pytest

from glassrag.errors import ConfigError
from glassrag.pipeline import Pipeline
from glassrag.rerank.features import FEATURES, FeatureMaker
from glassrag.rerank.learned import fit_logistic, train
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.tune import train_reranker


def test_logistic_regression_equals_scikit_learn():
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((300, 4))
    y = (x @ np.array([1.5, -2.0, 0.0, 0.5]) + rng.standard_normal(300) > 0).astype(float)
    w, b = fit_logistic(x, y, l2=1.0)
    ref = sklearn.LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(x, y)
    np.testing.assert_allclose(w, ref.coef_[0], atol=1e-4)
    assert b == pytest.approx(ref.intercept_[0], abs=1e-4)


def test_train_standardises_and_records_the_model():
    rows = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [4.0, 5.0]])
    model = train(rows, np.array([0.0, 0.0, 1.0, 1.0]))
    assert model["mean"] == [2.5, 5.0]
    assert model["std"] == pytest.approx([np.std([1, 2, 3, 4]), 1.0])  # constant feature: std 1
    assert model["weights"][0] > 0 and model["positives"] == 2


def test_features_by_hand(index):
    pipe = Pipeline(index)
    maker = FeatureMaker(index, pipe.bm25)
    query, _ = pipe.analyze("What does E-4107 mean?")
    answer = pipe.run("What does E-4107 mean?")
    hits = list(answer.stage("fuse").hits[:3])
    x = maker.matrix(query, hits)
    assert x.shape == (3, len(FEATURES))
    col = {name: x[:, i] for i, name in enumerate(FEATURES)}
    top = index.chunk(hits[0].chunk_id)
    assert "E-4107" in top.text
    assert col["identifier"][0] == 1.0  # the question's one identifier is in the chunk
    assert col["inv_rank"].tolist() == [1 / 1, 1 / 2, 1 / 3]
    assert col["bm25_ratio"].max() == pytest.approx(1.0)


def test_learned_reranker_trains_and_reranks(index):
    questions = [Question(f"t{i}", q, True, split="train", answers=(Span(d, loc),))
                 for i, (q, d, loc) in enumerate([
                     ("What does E-4107 mean?", "manual", "§ 2.1 Sensor errors"),
                     ("battery below ten percent", "manual", "§ 2.2 Power errors"),
                     ("mirror motor overheating", "scanner", "§ 1. Errors"),
                     ("daily allowance for meals", "travel", "§ Per diem"),
                     ("private car kilometre", "travel", "§ Mileage")])]
    model = train_reranker(index, index.config, questions, "inline")
    assert model["features"] == list(FEATURES) and model["questions"] == 5
    index.extra["reranker"] = model
    config = index.config.with_overrides(rerank={"method": "learned", "pool": 5})
    answer = Pipeline(index, config).run("What does E-4107 mean?")
    rerank = answer.stage("rerank")
    assert rerank.inputs == ("fuse",) and len(rerank.hits) == len(answer.stage("fuse").hits)
    assert all(0 < h.score < 1 for h in rerank.hits[:5])
    assert set(rerank.params["weights"]) == set(FEATURES)


def test_learned_before_training_is_a_clear_error(index):
    with pytest.raises(ConfigError, match="has not been trained") as info:
        Pipeline(index, index.config.with_overrides(rerank={"method": "learned"}))
    assert "glassrag rerank-train" in info.value.hint


def test_auto_uses_a_trained_reranker_only(index):
    pipe = Pipeline(index, index.config.with_overrides(rerank={"method": "auto"}))
    assert not [s for s in pipe.stages if s.kind == "rerank"]
    assert "no reranker trained" in pipe.run("tilt").stage("analyze").notes[-1]


def test_coverage_from_the_term_counts_equals_the_share_of_analysed_chunk_terms(index):
    """Without context headers (the default) a chunk's row of the term counts holds exactly
    the terms of its analysed text, so the column lookup gives the old per-chunk sets' value."""
    assert not index.config.chunk.context_header
    pipe = Pipeline(index)
    maker = FeatureMaker(index, pipe.bm25)
    rows = np.arange(len(index.chunks))
    for question in ("What does E-4107 mean?", "battery tripod level", "daily allowance zebra"):
        stems = set(index.analyzer(question))
        expected = [len(stems & set(index.analyzer(c.text))) / len(stems) for c in index.chunks]
        np.testing.assert_allclose(maker.coverage(stems, rows), expected)
