import pytest

from glassrag.errors import ConfigError, UnknownNameError
from glassrag.fuse import FUSERS, RRF, Weighted, make_fuser
from glassrag.schema import Hit
from glassrag.stage import Entry


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


# weighted fusion with each retriever's score of every chunk (what the pipeline passes) ---------

from glassrag.fuse.base import ScoreSource  # noqa: E402
from glassrag.fuse.normalize import min_max  # noqa: E402

# the whole corpus: a, b, c, d, e. BM25 scores every chunk; LSA's cosines likewise
BM25_ALL = {"a": 9.0, "b": 5.0, "c": 1.0, "d": 0.5, "e": 0.0}
LSA_ALL = {"a": 0.8, "b": -0.2, "c": 0.9, "d": 0.1, "e": -0.5}


def source(table, whole=True):
    return ScoreSource(lambda ids: [table[i] for i in ids], min(table.values()), max(table.values()), whole)


def test_weighted_with_sources_scores_a_missing_chunk_by_its_real_score():
    """d is not in BM25's list, b not in LSA's: each gets its real score, normalised over the
    whole corpus (BM25 0 to 9, LSA -0.5 to 0.9)."""
    fused = make_fuser("weighted", weight=0.3).fuse(INPUTS, {"bm25": source(BM25_ALL), "lsa": source(LSA_ALL)})
    by_id = {h.chunk_id: h for h in fused}
    assert set(by_id) == {"a", "b", "c", "d"}  # the union of the lists, not the corpus
    for cid in by_id:
        expected = 0.3 * (BM25_ALL[cid] - 0.0) / (9.0 - 0.0) + 0.7 * (LSA_ALL[cid] + 0.5) / (0.9 + 0.5)
        assert by_id[cid].score == pytest.approx(expected), cid
    assert [h.chunk_id for h in fused] == sorted(by_id, key=lambda c: -by_id[c].score)
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    d = by_id["d"].detail["inputs"]
    assert d["bm25"] == {"rank": None, "score": 0.5, "normalized": pytest.approx(0.5 / 9)}
    assert d["lsa"] == {"rank": 3, "score": 0.1, "normalized": pytest.approx(0.6 / 1.4)}


def test_weighted_with_candidate_sources_normalises_over_the_candidates():
    """An approximate source (not the whole corpus) normalises over the candidates' scores."""
    lsa = source(LSA_ALL, whole=False)
    fused = {h.chunk_id: h.score for h in make_fuser("weighted", weight=0.5).fuse(
        INPUTS, {"bm25": source(BM25_ALL), "lsa": lsa})}
    low, high = -0.2, 0.9  # LSA's scores of a, b, c, d
    assert fused["b"] == pytest.approx(0.5 * 5 / 9 + 0.5 * 0.0)
    assert fused["c"] == pytest.approx(0.5 * 1 / 9 + 0.5 * (0.9 - low) / (high - low))


def test_weighted_with_equal_scores_gives_every_chunk_the_full_weight():
    flat = ScoreSource(lambda ids: [2.0] * len(ids), 2.0, 2.0, True)
    fused = make_fuser("weighted", weight=0.25).fuse(INPUTS, {"bm25": flat, "lsa": source(LSA_ALL)})
    a = next(h for h in fused if h.chunk_id == "a")
    assert a.score == pytest.approx(0.25 * 1.0 + 0.75 * 1.3 / 1.4)


def test_weighted_depth_and_weights():
    fused = make_fuser("weighted", weight=0.3, depth=1).fuse(INPUTS)
    assert {h.chunk_id: h.score for h in fused} == {"a": pytest.approx(0.3), "c": pytest.approx(0.7)}
    three = {**INPUTS, "x": hits("x", [("d", 3.0), ("a", 1.0)])}
    fused = {h.chunk_id: h.score for h in make_fuser("weighted").fuse(three)}
    assert fused["d"] == pytest.approx(0.0 / 3 + 1 / 3 * 0.0 + 1 / 3 * 1.0)
    fused = {h.chunk_id: h.score for h in make_fuser("weighted", weights=[0.5, 0.25, 0.25]).fuse(three)}
    assert fused["a"] == pytest.approx(0.5 * 1.0 + 0.25 * 0.7 / 0.8 + 0.25 * 0.0)
    assert make_fuser("weighted", weight=0.3).params() == {"method": "weighted", "weight": 0.3, "depth": 100,
                                                           "weights": None, "keep_first": 0}
    for bad in (-0.01, 1.01):
        with pytest.raises(ConfigError, match="fusion weight must be in"):
            make_fuser("weighted", weight=bad)
    make_fuser("weighted", weight=0.0), make_fuser("weighted", weight=1.0)  # the ends are allowed


def test_min_max_by_arithmetic():
    assert min_max([]).size == 0
    assert list(min_max([3.0, 3.0])) == [1.0, 1.0]
    assert list(min_max([4.0, 2.0, 3.0])) == [1.0, 0.0, 0.5]


def test_fused_ties_keep_the_first_seen_order():
    tied = {"bm25": hits("bm25", [("a", 1.0), ("b", 1.0)]), "lsa": hits("lsa", [("b", 1.0), ("a", 1.0)])}
    assert [h.chunk_id for h in make_fuser("rrf").fuse(tied)] == ["a", "b"]
    assert [h.chunk_id for h in make_fuser("weighted").fuse(tied)] == ["a", "b"]


def test_defaults_names_and_messages():
    """RRF's literature defaults, the stage name every fused hit carries, and the errors'
    words (what a user reads)."""
    assert make_fuser("rrf").params() == {"method": "rrf", "k": 60, "depth": 100, "keep_first": 0}
    assert make_fuser("rrf").fuse(INPUTS)[0].score == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))
    long = {"bm25": hits("bm25", [(f"c{i}", 200.0 - i) for i in range(101)])}
    assert len(make_fuser("rrf").fuse(long)) == len(make_fuser("weighted").fuse(long)) == 100
    for fused in (make_fuser("weighted").fuse(INPUTS),
                  make_fuser("weighted").fuse(INPUTS, {"bm25": source(BM25_ALL), "lsa": source(LSA_ALL)})):
        assert {h.stage for h in fused} == {"fuse"}
    a = next(h for h in make_fuser("weighted", weight=0.3).fuse(INPUTS) if h.chunk_id == "a")
    assert a.detail["inputs"]["lsa"] == {"rank": 2, "score": 0.8, "normalized": pytest.approx(0.7 / 0.8)}
    with pytest.raises(UnknownNameError) as info:
        make_fuser("combsum")
    assert info.value.problem == "unknown fusion method 'combsum'"
    with pytest.raises(ConfigError) as info:
        make_fuser("weighted", weights=[1.0]).fuse(INPUTS)
    assert info.value.hint == "give one weight per retriever, in order"


def test_make_fuser_finds_the_class_in_the_one_table(monkeypatch):
    """A fusion added to FUSERS alone is made by name with explicit parameters: make_fuser
    keeps no list of its own."""

    class Flat(RRF):
        def params(self):
            return {**super().params(), "method": "flat"}

    monkeypatch.setitem(FUSERS, "flat", Entry(Flat.configured))
    made = make_fuser("flat", k=1)
    assert type(made) is Flat and made.params() == {"method": "flat", "k": 1, "depth": 100, "keep_first": 0}
    assert type(make_fuser("weighted", weight=0.3)) is Weighted
