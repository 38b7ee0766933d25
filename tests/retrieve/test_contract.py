"""A retriever that meets the documented contract (glassrag/stage.py: name, kind, params,
run(query, inputs) -> StageOutput; retrieve/base.py `Retriever` adds searched) and nothing more,
registered with one table entry, runs fused under weighted and RRF fusion, observed, evaluated
and drawn on the ask page (issue 29: it used to crash weighted fusion with a bare
AssertionError unless it also wrote a hidden `sims:NAME` cache key). Every entry of every table
also gets tests/test_stage_contract.py's tests."""

from __future__ import annotations

from typing import Any

import pytest

from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.runs import evaluate
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, offered, retrievers
from glassrag.retrieve.base import Entry, ScoresAnyChunk, listed_scores
from glassrag.schema import Hit, Kind
from glassrag.stage import ScoreSource, StageOutput


class Toy:
    """Ranks the chunks that hold the question's first word, by how often they hold it."""

    name = "toy"
    kind = Kind.RETRIEVE

    def __init__(self, index: Any, config: Any, bm25: Any) -> None:
        self.index = index
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"family": "lexical"}

    def run(self, query: Query, inputs: Any) -> StageOutput:
        word = query.tokens[0]
        counts = [(c.id, float(c.text.lower().count(word))) for c in self.index.chunks]
        ranked = sorted((x for x in counts if x[1] > 0), key=lambda x: -x[1])
        return StageOutput(tuple(Hit(cid, s, r, self.name) for r, (cid, s) in enumerate(ranked, 1)))


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
    source = bm25.run(query, {}).scores
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
    record = next(r for r in run.questions if r.id == "sensor")
    assert record.stages["toy"].first_relevant_rank == 1


def test_the_toy_entry_has_the_defaults(index, toy):
    assert "toy" in offered(index)
    term, text = retrievers(index)["toy"].describe_score("toy", {})
    assert "toy" in text and "cosine" not in text.lower()


def test_the_toy_is_drawn_on_the_ask_page(index, toy, tmp_path):
    """Offered by the settings form, fused by a query string, and drawn as a column of the route
    that joins the fusion, its score explained by its entry's default description."""
    pytest.importorskip("starlette", reason="the web app needs the web extra: pip install 'glassrag[web]'")
    pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")
    from urllib.parse import urlencode

    from starlette.testclient import TestClient

    from glassrag.store import EmbeddedStore
    from glassrag.web.server import create_app

    folder = tmp_path / "handbook"
    EmbeddedStore(folder).write(index)
    client = TestClient(create_app([folder]), base_url="http://127.0.0.1")
    for method in ("weighted", "rrf"):
        r = client.get("/ask.json?" + urlencode({"q": "calibration of the tilt sensor", "role.toy": "fused",
                                                  "role.bm25": "fused", "role.lsa": "off", "fuse.method": method,
                                                  "rerank.method": "none", "gate.enabled": "false"}))
        assert r.status_code == 200, r.text
        data = r.json()
        columns = [c["name"] for c in data["route"]["columns"]]
        assert "toy" in columns and "fuse" in columns, columns
        fuse = next(t for t in data["answer"]["trace"] if t["name"] == "fuse")
        assert set(fuse["inputs"]) == {"toy", "bm25"} and fuse["params"]["method"] == method
    roles = [f["name"] for g in data["settings"]["form"] for f in g.get("fields", ())]
    assert "role.toy" in roles


def test_the_toy_gets_the_contract_tests_for_free(index, toy):
    """The checks every table entry inherits (tests/stage_contract.py), on the toy's one entry."""
    from tests.stage_contract import check_entry

    check_entry(index, "retrieve", "toy", RETRIEVERS["toy"], "calibration of the tilt sensor")


class OnlyTheContract:
    """BM25 behind the contract alone: `run`, and no `apply`."""

    name = "bm25"
    kind = "retrieve"

    def __init__(self, index: Any, config: Any, bm25: Any) -> None:
        from glassrag.retrieve.bm25 import BM25Retriever

        self._bm25 = BM25Retriever(index, config, bm25)
        self.searched = self._bm25.searched

    def params(self) -> dict[str, Any]:
        return self._bm25.params()

    def run(self, query: Query, inputs: Any) -> StageOutput:
        return self._bm25.run(query, inputs)


def test_the_lab_reads_any_retriever_through_the_contract(index, toy, monkeypatch):
    """The lab called `.apply`, which the contract does not have: a retriever that met the
    contract only crashed its exhibits (issue 50.5)."""
    from glassrag.lab.base import LabBench, retriever_rankings
    from glassrag.lab.bm25 import search

    monkeypatch.setitem(RETRIEVERS, "bm25", Entry(OnlyTheContract))
    q = Question("tilt", "calibration of the tilt sensor", True, split="train",
                 answers=(Span("manual", "§ 2.1 Sensor errors"),))
    bench = LabBench("handbook", index, (q,), "hand.jsonl")
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": ["toy"]})
    answer = Pipeline(index, config).run(q.question)
    ranked = retriever_rankings(bench, config, [q], ["bm25", "toy"])
    judgement = bench.judge.judge(q)
    for name in ("bm25", "toy"):
        assert ranked[name]["tilt"] == judgement.ranked_units([h.chunk_id for h in answer.stage(name).hits])
    found = search(bench, q.question, index.config.bm25.k1, index.config.bm25.b)
    assert found["hits"] and [r["chunk"] for r in found["hits"]] == \
        [h.chunk_id for h in answer.stage("bm25").hits[:len(found["hits"])]]
