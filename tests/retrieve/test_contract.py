"""A retriever that meets the documented contract (retrieve/base.py `Retriever`: name, kind,
searched, params, apply) and nothing more, registered with one table entry, runs fused under
weighted and RRF fusion, observed, and evaluated (issue 29: it used to crash weighted fusion
with a bare AssertionError unless it also wrote a hidden `sims:NAME` cache key)."""

from __future__ import annotations

from typing import Any

import pytest

from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.runs import evaluate
from glassrag.fuse.base import ScoreSource
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, describe_score, offered
from glassrag.retrieve.base import Entry, ScoresAnyChunk, fusion_scores, listed_scores
from glassrag.schema import Hit


class Toy:
    """Ranks the chunks that hold the question's first word, by how often they hold it."""

    name = "toy"
    kind = "retrieve"

    def __init__(self, index: Any, config: Any, bm25: Any) -> None:
        self.index = index
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"family": "lexical"}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        word = query.tokens[0]
        counts = [(c.id, float(c.text.lower().count(word))) for c in self.index.chunks]
        ranked = sorted((x for x in counts if x[1] > 0), key=lambda x: -x[1])
        return [Hit(cid, s, r, self.name) for r, (cid, s) in enumerate(ranked, 1)], []


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(RETRIEVERS, "toy", Entry(Toy))


def test_the_toy_declares_no_scores_beyond_its_list():
    assert not isinstance(Toy, ScoresAnyChunk) and "score_source" not in vars(Toy)


@pytest.mark.parametrize("method", ["weighted", "rrf"])
def test_a_toy_retriever_fuses(index, toy, method):
    config = index.config.with_overrides(retrieve={"retrievers": ["toy", "bm25"], "observe": []},
                                         fuse={"method": method})
    answer = Pipeline(index, config).run("calibration of the tilt sensor")
    fuse = answer.stage("fuse")
    assert fuse.inputs == ("toy", "bm25")
    assert answer.stage("toy").hits and fuse.hits
    assert answer.passage is not None and "E-4107" in answer.passage.text


def test_weighted_fusion_reads_the_toy_list_scores(index, toy):
    """Only the toy fused with one weight: a chunk's fused score is its min-max normalised
    list score, (s - min) / (max - min) over the toy's candidates."""
    config = index.config.with_overrides(retrieve={"retrievers": ["toy", "bm25"], "observe": []},
                                         fuse={"method": "weighted", "weight": 1.0})
    answer = Pipeline(index, config).run("calibration tilt sensor")
    scores = [h.score for h in answer.stage("toy").hits]
    low, high = min(scores), max(scores)
    fused = {h.chunk_id: h.score for h in answer.stage("fuse").hits}
    for h in answer.stage("toy").hits:
        assert fused[h.chunk_id] == pytest.approx((h.score - low) / (high - low) if high > low else 1.0)


def test_listed_scores_bound_an_unlisted_chunk_by_the_lowest():
    source = listed_scores([Hit("a", 3.0, 1, "toy"), Hit("b", 1.0, 2, "toy")])
    assert list(source.score(["a", "b", "c"])) == [3.0, 1.0, 1.0]
    assert source.whole_corpus is False
    assert list(listed_scores([]).score(["c"])) == [0.0]


def test_a_retriever_that_scores_every_chunk_declares_it(index):
    bm25 = Pipeline(index).retrievers["bm25"]
    query = Query("tilt sensor", ["tilt", "sensor"])
    bm25.apply(query, [])
    source = fusion_scores(bm25, query, [])
    assert isinstance(source, ScoreSource) and source.whole_corpus
    full = query.bm25_scores(Pipeline(index).bm25)
    assert (source.low, source.high) == (float(full.min()), float(full.max()))


def test_a_toy_retriever_is_observed_and_evaluated(index, toy):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": ["toy"]})
    sensor = "E-4107 means the tilt sensor lost calibration."
    questions = [Question("sensor", "calibration of the tilt sensor", True,
                          answers=(Span("manual", "§ 2.1 Sensor errors", sensor),)),
                 Question("gym", "Is there a gym membership?", False)]
    run = evaluate(Pipeline(index, config), questions)
    record = next(r for r in run.questions if r["id"] == "sensor")
    assert record["stages"]["toy"]["first_relevant_rank"] == 1


def test_the_toy_entry_has_the_defaults(index, toy):
    assert "toy" in offered(index)
    term, text = describe_score("toy", {})
    assert "toy" in text and "cosine" not in text.lower()
