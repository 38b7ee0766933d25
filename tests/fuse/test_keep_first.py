"""fuse.keep_first: every fused retriever's first hit stands at rank N or better (issue 47:
a perfect lexical hit buried by fusion); the others keep their fused order, and the scores
stay non-increasing."""

import pytest

from glassrag.fuse import make_fuser
from glassrag.fuse.base import keep_firsts
from glassrag.schema import Hit


def hits(stage, ids_scores):
    return [Hit(cid, s, r, stage) for r, (cid, s) in enumerate(ids_scores, 1)]


# BM25 puts "z" first; the dense retriever ranks it 20th, and fusion puts it outside the top 5
BURIED = {
    "bm25": hits("bm25", [("z", 10.0), ("a", 9.9), ("b", 9.8), ("c", 9.7), ("d", 9.6), ("e", 9.5)]),
    "dense": hits("dense", [(c, 0.9 - i / 100) for i, c in enumerate("abcdefghijklmnopqrs")] + [("z", 0.10)]),
}
PARAMS = {"rrf": {}, "weighted": {"weight": 0.3}}


def ids(fused):
    return [h.chunk_id for h in fused]


@pytest.mark.parametrize("method", ["rrf", "weighted"])
def test_without_it_fusion_buries_the_first_place(method):
    fused = make_fuser(method, **PARAMS[method]).fuse(BURIED)
    assert ids(fused).index("z") + 1 > 5


@pytest.mark.parametrize("method", ["rrf", "weighted"])
def test_a_first_place_is_lifted_to_the_floor_and_no_further(method):
    plain = make_fuser(method, **PARAMS[method]).fuse(BURIED)
    kept = make_fuser(method, keep_first=3, **PARAMS[method]).fuse(BURIED)
    others = [c for c in ids(plain) if c != "z"]
    assert ids(kept) == [*others[:2], "z", *others[2:]]
    assert [h.rank for h in kept] == list(range(1, len(kept) + 1))
    moved = kept[2]
    was = next(h for h in plain if h.chunk_id == "z")
    assert moved.detail["kept_first"] == {"fused_score": was.score, "fused_rank": was.rank}
    assert moved.score == kept[3].score  # the score of the hit it now stands above
    assert all(a.score >= b.score for a, b in zip(kept, kept[1:]))
    assert all("kept_first" not in h.detail for h in kept if h.chunk_id != "z")


def test_a_first_place_already_above_the_floor_stays():
    fused = hits("fuse", [("a", 3.0), ("z", 2.0), ("b", 1.0)])
    inputs = {"x": hits("x", [("z", 1.0)]), "y": hits("y", [("a", 1.0)])}
    assert keep_firsts(fused, inputs, 2) == fused
    assert keep_firsts(fused, inputs, 0) is fused


def test_two_first_places_below_the_floor_take_the_places_just_above_it():
    fused = hits("fuse", [("a", 6.0), ("b", 5.0), ("c", 4.0), ("x", 3.0), ("d", 2.0), ("y", 1.0)])
    inputs = {"one": hits("one", [("x", 1.0)]), "two": hits("two", [("y", 1.0)])}
    assert ids(keep_firsts(fused, inputs, 3)) == ["a", "x", "y", "b", "c", "d"]
    assert ids(keep_firsts(fused, inputs, 4)) == ["a", "b", "x", "y", "c", "d"]
    # a first place at the floor is not pushed below it by another one lifted above it
    fused = hits("fuse", [("a", 3.0), ("x", 2.0), ("b", 1.5), ("y", 1.0)])
    assert ids(keep_firsts(fused, inputs, 2)) == ["x", "y", "a", "b"]


def test_the_setting_reaches_the_fuser():
    from glassrag.config import Config

    config = Config().with_overrides(fuse={"keep_first": 3})
    assert config.fuse.keep_first == 3
    from glassrag.fuse import FUSERS

    made = FUSERS["weighted"].make(None, config, None)
    assert made.keep_first == 3 and made.params()["keep_first"] == 3
