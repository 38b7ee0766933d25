"""What a calibration is valid for (gate/threshold.scoring_settings): the trained reranker
enters by a digest of the whole model, and only when it is the reranker used (issue 13: the
re-run's survivors in the digest)."""

from __future__ import annotations

import hashlib
import json

from glassrag.config import Config
from glassrag.gate.threshold import scoring_settings

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
