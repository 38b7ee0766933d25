"""The matter filter (rerank/matter.py) and window scoring (rerank/window.py): which chunks
each rule calls matter, and the window's arithmetic on a real index."""

from __future__ import annotations

import pytest

from glassrag.query import Query
from glassrag.rerank.matter import MatterFilter, matter
from glassrag.rerank.window import WindowScore
from glassrag.schema import Chunk, Hit


def chunk(text: str, heading: tuple[str, ...] = ()) -> Chunk:
    return Chunk("c", "d", "page 1", text, 0, len(text), 0, heading)


@pytest.mark.parametrize("text, heading, rule", [
    ("Smith, J. (2011). A study. Journal of Things.", ("Paper", "References"), "heading"),
    ("Work on this package was supported by a grant.", ("Acknowledgments",), "heading"),
    ("References\nAnnapureddy, Y., Liu, C. (2011). S-TaLiRo: A Tool.", (), "heading"),
    ("Davies, R. B. (1980). The distribution. https://doi.org/10.2307/2346911. Landis, J. et al. (1977). "
     "The measurement of observer agreement. Biometrics 33, pp. 159-174.", ("Method",), "citations"),
    ("Scope .......... 4\nDefinitions ........ 5\nEligibility . . . . . . 7\nClaims ..... 12", (), "contents"),
])
def test_each_rule_calls_its_matter(text, heading, rule):
    assert matter(chunk(text, heading)) == rule


@pytest.mark.parametrize("text, heading", [
    ("Sources of inflation in 2024 were food (1.2) and energy (0.4) prices.", ("Results",)),
    ("Fresh vegetables......... 0.5 1.2 0.03\nFresh fruits ......... 0.7 2.1 0.01\nEggs ...... 0.2 8.5 0.3",
     ()),
    ("Other methods, such as ensembling [@maddu2019stability; @reinbold2021robust], were tried in 2019.",
     ("Statement of need",)),
    ("The contents of the stomach were examined in 1953 by the survey team.", ("Diet",)),
])
def test_text_about_the_subject_is_kept(text, heading):
    assert matter(chunk(text, heading)) is None


def test_the_filter_drops_matter_and_renumbers_the_rest(index):
    hits = [Hit(c.id, 10.0 - r, r, "bm25") for r, c in enumerate(index.chunks, 1)]
    called = {c.id: matter(c) for c in index.chunks}
    kept, notes = MatterFilter(index.chunk).apply(Query("q", ["q"]), hits)
    assert [h.chunk_id for h in kept] == [h.chunk_id for h in hits if called[h.chunk_id] is None]
    assert [h.rank for h in kept] == list(range(1, len(kept) + 1))
    assert len(notes) == len({r for r in called.values() if r})


def test_a_neighbour_in_the_list_raises_a_chunk_by_weight_times_its_lift(index):
    first = next(c for c in index.chunks if any(n.id != c.id for n in index.around(c.id, 1)))
    neighbour = next(n for n in index.around(first.id, 1) if n.id != first.id)
    lonely = next(c for c in index.chunks if c.doc_id != first.doc_id)
    hits = [Hit(lonely.id, 5.0, 1, "bm25"), Hit(first.id, 4.0, 2, "bm25"), Hit(neighbour.id, 3.0, 3, "bm25")]
    out, notes = WindowScore(index, 1, 0.5).apply(Query("q", ["q"]), hits)
    score = {h.chunk_id: h.score for h in out}
    low = 3.0
    assert score[first.id] == pytest.approx(4.0 + 0.5 * (3.0 - low))  # its neighbour is the lowest: no lift
    assert score[neighbour.id] == pytest.approx(3.0 + 0.5 * (4.0 - low))
    assert score[lonely.id] == pytest.approx(5.0)  # no neighbour in the list
    assert [h.rank for h in out] == [1, 2, 3] and out[0].chunk_id == lonely.id
    assert out[1].detail["before"] == 4.0
    assert notes == ["1 of 3 chunk(s) raised by a neighbour in the list"]
    big, _ = WindowScore(index, 1, 10.0).apply(Query("q", ["q"]), hits)
    assert big[0].chunk_id == neighbour.id  # 3 + 10 × 1 passes 5


def test_window_scoring_keeps_an_empty_list_empty(index):
    assert WindowScore(index, 1, 0.5).apply(Query("q", ["q"]), []) == ([], [])
