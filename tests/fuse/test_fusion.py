import pytest

from glassrag.errors import ConfigError, UnknownNameError
from glassrag.fuse import make_fuser
from glassrag.schema import Hit


def hits(stage, ids_scores):
    return [Hit(cid, s, r, stage) for r, (cid, s) in enumerate(ids_scores, 1)]


INPUTS = {
    "bm25": hits("bm25", [("a", 9.0), ("b", 5.0), ("c", 1.0)]),
    "lsa": hits("lsa", [("c", 0.9), ("a", 0.8), ("d", 0.1)]),
}


def test_rrf_by_arithmetic():
    fused = {h.chunk_id: h.score for h in make_fuser("rrf", k=60).fuse(INPUTS)}
    assert fused["a"] == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))
    assert fused["c"] == pytest.approx(1 / (60 + 3) + 1 / (60 + 1))
    assert fused["b"] == pytest.approx(1 / (60 + 2))
    assert fused["d"] == pytest.approx(1 / (60 + 3))


def test_rrf_records_each_inputs_rank_and_score():
    top = make_fuser("rrf").fuse(INPUTS)[0]
    assert top.chunk_id == "a" and top.rank == 1 and top.stage == "fuse"
    assert top.detail["inputs"] == {"bm25": {"rank": 1, "score": 9.0}, "lsa": {"rank": 2, "score": 0.8}}


def test_rrf_depth_limits_each_input():
    fused = {h.chunk_id for h in make_fuser("rrf", depth=1).fuse(INPUTS)}
    assert fused == {"a", "c"}


def test_weighted_min_max_by_arithmetic():
    fused = {h.chunk_id: h.score for h in make_fuser("weighted", weight=0.3).fuse(INPUTS)}
    assert fused["a"] == pytest.approx(0.3 * 1.0 + 0.7 * (0.8 - 0.1) / (0.9 - 0.1))
    assert fused["b"] == pytest.approx(0.3 * (5 - 1) / (9 - 1))
    assert fused["c"] == pytest.approx(0.3 * 0.0 + 0.7 * 1.0)
    assert fused["d"] == pytest.approx(0.0)


def test_weighted_needs_one_weight_per_input():
    with pytest.raises(ConfigError, match="2 retrievers to fuse but 3 weights"):
        make_fuser("weighted", weights=[0.2, 0.3, 0.5]).fuse(INPUTS)
    with pytest.raises(ConfigError):
        make_fuser("weighted", weight=1.5)


def test_unknown_method_lists_valid():
    with pytest.raises(UnknownNameError, match="rrf, weighted"):
        make_fuser("combsum")
