"""Where the answer was lost, one hand-built trace per cause (evaluate/diagnose.py).

A trace is written as the stages it passed through, each with the rank at which it put
the one answering chunk "rel" (None: not in its list at all). Every list holds 30 hits
and the answer shows the top k = 5 of the last ranking stage, unless declined.
"""

from __future__ import annotations

import pytest

from glassrag.evaluate.diagnose import CAUSE_OF_KIND, CAUSES, loss_cause
from glassrag.evaluate.relevance import Judgement
from glassrag.schema import Answer, Hit, Passage, StageTrace

K = 5
JUDGED = Judgement({"a0": 1}, {"a0": "d"}, {"rel": ("a0",)}, {"a0": "x"}, True)


def hits(stage: str, rank: int | None, n: int = 30) -> tuple[Hit, ...]:
    return tuple(Hit("rel" if r == rank else f"{stage}-x{r}", 1.0 / r, r, stage) for r in range(1, n + 1))


def answer(*stages: tuple[str, str, int | None], declined: bool = False, shown: list[str] | None = None) -> Answer:
    """stages: (name, kind, rank of "rel"); a gate stage is ("gate", "gate", None)."""
    trace = []
    for name, kind, rank in stages:
        trace.append(StageTrace(name, kind, {}, (), () if kind == "gate" else hits(name, rank), 30, 0.0))
    ranked = [t for t in trace if t.kind != "gate"][-1]
    ids = shown if shown is not None else [h.chunk_id for h in ranked.hits[:K]]
    passages = [Passage(cid, "d", "t", "", "text", 1.0, i + 1) for i, cid in enumerate(ids)]
    return Answer("q", passages[0] if passages else None, tuple(passages[1:]), declined,
                  "declined" if declined else "", tuple(trace))


def cause(a: Answer, judgement: Judgement = JUDGED, answerable: bool = True, visible: bool = True) -> str | None:
    return loss_cause(judgement, answerable, a, K, visible)


BM25 = ("bm25", "retrieve")


def test_a_hit_has_no_cause():
    assert cause(answer((*BM25, 1), ("fuse", "fuse", 1))) is None


def test_shown_but_not_visible():
    assert cause(answer((*BM25, 1), ("fuse", "fuse", 2)), visible=False) == "shown but not visible"


def test_cut_only_when_no_chunk_holds_it_and_none_is_relevant():
    cut = Judgement({"a0": 1}, {"a0": "d"}, {}, {"a0": "x"}, False)
    assert cause(answer((*BM25, None)), cut) == "cut"
    # held whole by no chunk, but another chunk is relevant: not cut
    partly = Judgement({"a0": 1, "a1": 1}, {"a0": "d", "a1": "d"}, {"rel": ("a1",)}, {"a0": "x", "a1": ""}, False)
    assert cause(answer((*BM25, None)), partly) == "not retrieved"
    # intact but nothing relevant in the index: nothing retrieved it, not a cut
    none = Judgement({"a0": 1}, {"a0": "d"}, {}, {"a0": "x"}, True)
    assert cause(answer((*BM25, None)), none) == "not retrieved"


def test_not_retrieved_reads_retrievers_only():
    assert cause(answer((*BM25, None), ("fuse", "fuse", None))) == "not retrieved"
    # an observed retriever that had it does not count: its list feeds nothing
    assert cause(answer((*BM25, None), ("lsa", "observe", 1), ("fuse", "fuse", None))) == "not retrieved"
    # a second retriever that had it does
    assert cause(answer((*BM25, None), ("lsa", "retrieve", 30), ("fuse", "fuse", None))) == "ranked too low"


def test_an_excluded_chunk_is_not_an_answer():
    excluded = Judgement({"a0": 1}, {"a0": "d"}, {"rel": ("a0",)}, {"a0": "x"}, True, frozenset({"rel"}))
    assert cause(answer((*BM25, 1)), excluded) == "not retrieved"


@pytest.mark.parametrize("kind,expected", sorted(CAUSE_OF_KIND.items()))
def test_each_stage_kind_that_can_lose_it(kind, expected):
    """In the top k of the retriever and of the stage before, out of this stage's top k."""
    assert cause(answer((*BM25, 1), ("fuse", "fuse", 1), ("stage", kind, K + 1))) == (
        "fused out" if kind == "fuse" else expected)
    assert cause(answer((*BM25, 1), ("stage", kind, K + 1))) == expected


def test_every_cause_is_reachable_and_listed():
    assert set(CAUSE_OF_KIND.values()) <= set(CAUSES)
    reached = {
        cause(answer((*BM25, None)), Judgement({"a0": 1}, {"a0": "d"}, {}, {"a0": "x"}, False)),
        cause(answer((*BM25, None))),
        *(cause(answer((*BM25, 1), (kind, kind, None))) for kind in CAUSE_OF_KIND),
        cause(answer((*BM25, 20))),
        cause(answer((*BM25, 1), ("gate", "gate", None), declined=True, shown=[])),
        cause(answer((*BM25, 1)), visible=False),
        cause(answer((*BM25, 1)), answerable=False),
    }
    assert reached == set(CAUSES)


def test_the_first_stage_that_lost_it_is_blamed():
    a = answer((*BM25, 1), ("fuse", "fuse", 7), ("rerank", "rerank", 9), ("cap", "cap", 12))
    assert cause(a) == "fused out"
    a = answer((*BM25, 1), ("fuse", "fuse", 2), ("rerank", "rerank", 3), ("cap", "cap", 12))
    assert cause(a) == "capped out"


def test_a_stage_that_lifts_it_into_the_top_k_makes_the_next_loss_count():
    """The retriever had it at rank 8 (outside k); fusion lifted it to 2; the reranker dropped
    it to 9: the reranker lost it. (Forgetting that fusion lifted it says "ranked too low".)"""
    a = answer((*BM25, 8), ("fuse", "fuse", 2), ("rerank", "rerank", 9))
    assert cause(a) == "reranked out"
    a = answer((*BM25, 8), ("fuse", "fuse", 2), ("mmr", "mmr", 3), ("budget", "budget", None))
    assert cause(a) == "outside budget"


def test_a_stage_that_drops_it_below_k_means_a_later_loss_is_not_that_stage():
    """Once out of the top k, a later stage that does not have it did not lose it."""
    a = answer((*BM25, 1), ("versions", "versions", 6), ("rerank", "rerank", 2), ("cap", "cap", 8))
    assert cause(a) == "dropped as outdated"
    a = answer((*BM25, 7), ("fuse", "fuse", 7), ("rerank", "rerank", 9))
    assert cause(a) == "ranked too low"


@pytest.mark.parametrize("retriever,stage,expected", [
    (K, K + 1, "fused out"),          # rank k is inside the top k
    (K + 1, K + 1, "ranked too low"),  # rank k + 1 is not
    (K + 1, K, None),                  # lifted to rank k: shown
])
def test_the_top_k_boundary(retriever, stage, expected):
    assert cause(answer((*BM25, retriever), ("fuse", "fuse", stage))) == expected


def test_gated_only_when_the_ranking_still_had_it():
    gate = ("gate", "gate", None)
    assert cause(answer((*BM25, 1), ("fuse", "fuse", 1), gate, declined=True, shown=[])) == "gated"
    # declined, but the ranking had lost it before the gate
    assert cause(answer((*BM25, 20), ("fuse", "fuse", 20), gate, declined=True, shown=[])) == "ranked too low"
    # lifted into the top k by fusion, then declined: the gate lost it
    assert cause(answer((*BM25, 8), ("fuse", "fuse", 1), gate, declined=True, shown=[])) == "gated"
    # fusion lost it, then the gate declined: fusion is blamed, it came first
    assert cause(answer((*BM25, 1), ("fuse", "fuse", 9), gate, declined=True, shown=[])) == "fused out"


def test_a_declined_answer_shows_nothing_even_with_nearest_passages():
    """The nearest passages of a declined answer are not answers: still gated."""
    a = answer((*BM25, 1), ("fuse", "fuse", 1), ("gate", "gate", None), declined=True)
    assert a.passage is not None and a.passage.chunk_id == "rel"
    assert cause(a) == "gated"


def test_a_loss_after_the_gate():
    a = answer((*BM25, 1), ("fuse", "fuse", 1), ("gate", "gate", None), ("budget", "budget", None))
    assert cause(a) == "outside budget"


def test_unanswerable_questions():
    assert cause(answer((*BM25, None)), answerable=False) == "answered unanswerable"
    assert cause(answer((*BM25, None), ("gate", "gate", None), declined=True, shown=[]),
                 answerable=False) is None
