import json

import pytest

from glassrag.errors import ConfigError, QueryError
from glassrag.pipeline import Pipeline
from glassrag.schema import Answer


def test_trace_has_every_stage_in_order(index):
    answer = Pipeline(index).run("What does E-4107 mean?")
    assert [t.name for t in answer.trace] == ["analyze", "bm25", "lsa", "fuse", "gate", "budget",
                                              "answer", "read"]
    assert answer.stage("fuse").inputs == ("bm25", "lsa")
    assert answer.stage("gate").inputs == ("fuse",)
    assert answer.stage("answer").inputs == ("budget",)
    assert all(t.ms >= 0 for t in answer.trace)
    assert answer.stage("analyze").notes == (
        "tokens: e-4107 e 4107 mean",
        "rerank auto: no reranker trained for this index (glassrag rerank-train)")


def test_everything_after_retrieval_is_the_configured_list_run_by_the_loop(index):
    """Gate, budget, answer and reader are stages of the configured list (issue 29): the loop
    runs the list and writes each trace from the stage's params and what its output declares
    (the gate's signals); the budget reads the last ranking whatever the gate decides, the
    answer and the reader read the budget."""
    pipeline = Pipeline(index)
    answer = pipeline.run("What does E-4107 mean?")
    after = answer.trace[3:]
    assert [(t.name, t.kind) for t in after] == [(s.stage.name, s.stage.kind) for s in pipeline.steps]
    assert [t.kind for t in after] == ["fuse", "gate", "budget", "select", "read"]
    for t, step in zip(after, pipeline.steps):
        assert {k: v for k, v in t.params.items() if k != "signals"} == step.stage.params()
    assert set(answer.stage("gate").params["signals"]) >= {"top:bm25", "top:fuse", "coverage", "agreement"}
    assert answer.stage("budget").inputs == ("fuse",) and answer.stage("read").inputs == ("budget",)
    assert answer.stage("gate").hits == answer.stage("fuse").hits  # not calibrated: passed on whole
    assert answer.quote is not None and answer.stage("read").notes == (answer.quote.why,)


def test_exact_identifier_beats_its_near_twin(index):
    answer = Pipeline(index).run("What does E-4107 mean?")
    assert answer.passage.locator == "§ 2.1 Sensor errors"
    assert "E-4107 means the tilt sensor lost calibration." in answer.passage.text
    assert answer.passage.citation == "TX-200 Manual, § 2.1 Sensor errors"
    bm25 = answer.stage("bm25").hits
    twin = next(c.id for c in index.chunks if "E-4170" in c.text)
    first = next(c.id for c in index.chunks if "E-4107" in c.text)
    ranks = {h.chunk_id: h.rank for h in bm25}
    assert ranks[first] < ranks.get(twin, 10**9)


def test_fused_hits_explain_themselves(index):
    fuse = Pipeline(index).run("tilt sensor calibration").stage("fuse")
    top = fuse.hits[0]
    assert set(top.detail["inputs"]) <= {"bm25", "lsa"}
    expected = sum(1 / (60 + r["rank"]) for r in top.detail["inputs"].values())
    assert top.score == pytest.approx(expected)


def test_answer_json_roundtrip(index):
    answer = Pipeline(index).run("daily allowance for meals in Lisbon")
    data = json.loads(json.dumps(answer.to_dict()))
    assert Answer.from_dict(data) == answer
    assert data["citation"].startswith("Travel policy, § Per diem")


def test_bm25_only_configuration(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []})
    answer = Pipeline(index, config).run("quiet hours firmware")
    assert [t.name for t in answer.trace] == ["analyze", "bm25", "gate", "budget", "answer", "read"]
    assert answer.passage.doc_id == "notes" and answer.passage.locator == "lines 1-2"


@pytest.mark.parametrize("question,message", [
    ("", "the question is empty"),
    ("   ", "the question is empty"),
    ("the of and", "nothing searchable is left"),
    ("x" * 5000, "5000 characters long"),
])
def test_bad_questions(index, question, message):
    with pytest.raises(QueryError, match=message):
        Pipeline(index).run(question)


def test_observed_retriever_is_traced_but_not_fused(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": ["lsa"]})
    answer = Pipeline(index, config).run("tilt sensor calibration")
    assert [(t.name, t.kind) for t in answer.trace][:4] == [
        ("analyze", "analyze"), ("bm25", "retrieve"), ("lsa", "observe"), ("gate", "gate")]
    assert answer.stage("gate").inputs == ("bm25",)
    assert [h.chunk_id for h in answer.stage("answer").hits] == [
        h.chunk_id for h in answer.stage("bm25").hits[:5]]
    assert answer.stage("lsa").hits and "not fused" in answer.stage("lsa").notes[-1]


def test_no_match_is_a_declined_answer_not_an_error(index):
    config = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []})
    answer = Pipeline(index, config).run("zebra")
    assert answer.declined and answer.passage is None
    assert "not in the index: zebra" in answer.stage("bm25").notes[0]


def test_unknown_retriever(index):
    with pytest.raises(ConfigError, match="unknown retriever"):
        Pipeline(index, index.config.with_overrides(retrieve={"retrievers": ["splade"]}))


def test_observing_is_skipped_above_observe_max_chunks_and_the_trace_says_so(index):
    from glassrag.pipeline import Pipeline

    n = len(index.chunks)
    at = index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": ["lsa"],
                                               "observe_max_chunks": n})
    answer = Pipeline(index, at).run("quiet hours")
    assert [t.name for t in answer.trace if t.kind == "observe"] == ["lsa"]
    above = at.with_overrides(retrieve={"observe_max_chunks": n - 1})
    answer = Pipeline(index, above).run("quiet hours")
    assert not [t for t in answer.trace if t.kind == "observe"]
    assert any("observe skipped" in note and "lsa not run" in note for note in answer.trace[0].notes)


def test_a_shared_stage_cache_never_gives_one_configuration_the_fusion_of_anothers_lists(index):
    """The same retrievers run in both, one of them observed in the first and fused in the second:
    the second's fusion is its own, as without a cache (the experiment log's second-embedder read the
    first's from the workbench's shared cache and measured no difference at all)."""
    from glassrag.stage_cache import StageCache

    question = "what does E-4107 mean"
    observed = index.config.with_overrides(retrieve={"retrievers": ["bm25", "lsa"], "observe": ["bm25-rm3"]},
                                           fuse={"method": "rrf"})
    fused = index.config.with_overrides(retrieve={"retrievers": ["bm25", "lsa", "bm25-rm3"], "observe": []},
                                        fuse={"method": "rrf"})
    cache = StageCache()
    before = Pipeline(index, observed, cache).run(question).stage("fuse").hits
    shared = Pipeline(index, fused, cache).run(question).stage("fuse").hits
    alone = Pipeline(index, fused).run(question).stage("fuse").hits
    assert [(h.chunk_id, h.score) for h in shared] == [(h.chunk_id, h.score) for h in alone]
    assert [h.score for h in shared] != [h.score for h in before]


@pytest.mark.parametrize("field, retrieve, twice", [
    ("retrieve.retrievers", {"retrievers": ["bm25", "lsa", "bm25"], "observe": []}, "bm25"),
    ("retrieve.observe", {"retrievers": ["bm25"], "observe": ["lsa", "lsa"]}, "lsa")])
def test_a_retriever_named_twice_is_an_error_that_names_it(index, field, retrieve, twice):
    """["bm25", "bm25"] was accepted, traced twice and "fused" from one list (issue 50.5)."""
    with pytest.raises(ConfigError) as info:
        Pipeline(index, index.config.with_overrides(retrieve=retrieve))
    assert info.value.problem == (f"retriever(s) {twice!r} listed more than once in {field} "
                                  "(the settings of this question)")
    assert info.value.hint.startswith(f"name each retriever once, e.g. {field} = [")


def test_input_of_names_the_list_a_stage_reads_whether_or_not_it_runs(index):
    """Issue 50.1: what the reranker reads is declared by the pipeline, so its training rows
    (evaluate/tune.py) and the lab read the list it receives, with the reranker off."""
    from dataclasses import replace

    from tests.stage_contract import FLAT_MODEL

    trained = replace(index, extra={**index.extra, "reranker": FLAT_MODEL})
    both = {"retrievers": ["bm25", "lsa"], "observe": []}
    for settings, received in (({}, "fuse"), ({"window": {"size": 1}}, "window"),
                               ({"filter": {"matter": True}, "window": {"size": 0}}, "matter"),
                               ({"filter": {"matter": True}, "window": {"size": 1}}, "window")):
        config = index.config.with_overrides(retrieve=both, **settings)
        reranked = Pipeline(trained, config.with_overrides(rerank={"method": "learned"}))
        assert reranked.input_of("rerank") == received
        assert reranked.run("tilt sensor calibration").stage("rerank").inputs == (received,)
        off = Pipeline(trained, config.with_overrides(rerank={"method": "none"}, mmr={"relevance": None}))
        assert off.input_of("rerank") == off.input_of("mmr") == received
    alone = Pipeline(index, index.config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": []},
                                                        rerank={"method": "none"}, mmr={"relevance": None},
                                                        cap={"per_document": 0}, window={"size": 0}))
    assert [alone.input_of(k) for k in ("rerank", "cap", "gate", "budget", "read", "generate")] == \
        ["bm25", "bm25", "bm25", "bm25", "budget", "budget"]
    with pytest.raises(ValueError, match="does not read one list"):
        alone.input_of("fuse")
