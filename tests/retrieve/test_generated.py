"""BM25 with a generator's words (retrieve/generated.py): the mixed query is the formula worked
by hand, the bundled SmolLM2 writes the words (greedy: the same twice), and an index cannot name
an endpoint the question would be sent to."""

from __future__ import annotations

import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, make_retriever
from glassrag.retrieve import generated
from glassrag.retrieve.generated import PROMPTS, GeneratedRetriever
from tests.stage_contract import check_entry


def made(index, name: str = "bm25-hyde", **retrieve) -> GeneratedRetriever:
    config = index.config.with_overrides(retrieve={"retrievers": [name], "observe": [], **retrieve})
    bm25 = BM25(index.counts, config.bm25.k1, config.bm25.b)
    return make_retriever(name, index, config, bm25)


def test_each_prompt_is_a_retriever_of_the_table():
    assert set(PROMPTS) <= set(RETRIEVERS)


def test_the_mixed_query_is_the_formula_by_hand(index, monkeypatch):
    r = made(index, generated_weight=0.25)
    question = Query("what does the tilt error mean", index.analyzer("what does the tilt error mean"))
    monkeypatch.setitem(generated._WRITTEN, r.key(question.question),
                        "the tilt sensor lost calibration, sensor calibration")  # a generator's words
    asked = r.bm25.term_ids(question.tokens)
    wrote = r.bm25.term_ids(index.analyzer("the tilt sensor lost calibration, sensor calibration"))
    assert asked and wrote and set(wrote) - set(asked)
    expected: dict[int, float] = {}
    for t in asked:
        expected[t] = expected.get(t, 0.0) + 0.25 / len(asked)
    for t in wrote:
        expected[t] = expected.get(t, 0.0) + 0.75 / len(wrote)
    got = r.expansion(question)
    assert got.keys() == expected.keys()
    assert all(got[t] == pytest.approx(expected[t]) for t in got)
    assert sum(got.values()) == pytest.approx(1.0)


def test_words_the_index_lacks_add_nothing(index, monkeypatch):
    r = made(index)
    question = Query("tilt sensor", index.analyzer("tilt sensor"))
    monkeypatch.setitem(generated._WRITTEN, r.key(question.question), "zzzqx vvvqy")
    assert sum(r.expansion(question).values()) == pytest.approx(0.5)


def test_the_bundled_generator_writes_the_same_words_twice(index, monkeypatch):
    r = made(index, "bm25-rewrite", generated_tokens=24)
    question = "What does E-4107 mean?"
    monkeypatch.setattr(generated, "_WRITTEN", {})
    first = Pipeline(index, r.config).run(question)
    generated._WRITTEN.clear()  # written again, not read from what the first wrote
    again = Pipeline(index, r.config).run(question)
    trace = first.stage("bm25-rewrite")
    assert trace.notes[0].startswith("generated: ") and len(trace.notes[0]) > len("generated: ")
    assert trace.notes == again.stage("bm25-rewrite").notes
    assert [h.chunk_id for h in trace.hits] == [h.chunk_id for h in again.stage("bm25-rewrite").hits]


def test_a_question_is_written_once_for_every_retriever_of_the_same_settings(index, monkeypatch):
    # the pipelines an experiment fits and evaluates with, the web's settings cache, the bundled
    # off-topic questions asked of each corpus: one generation each, not one per retriever
    from glassrag.generate.local import LocalModel

    calls: list[str] = []
    complete = LocalModel.complete

    def counted(self, messages, *args, **kwargs):
        calls.append(messages[-1]["content"])
        return complete(self, messages, *args, **kwargs)

    monkeypatch.setattr(LocalModel, "complete", counted)
    monkeypatch.setattr(generated, "_WRITTEN", {})
    r = made(index, "bm25-rewrite", generated_tokens=8)
    for _ in range(2):
        Pipeline(index, r.config).run("What does E-4107 mean?")
    assert calls == ["What does E-4107 mean?"]
    other = r.config.with_overrides(retrieve={"generated_tokens": 9})  # other settings: written anew
    Pipeline(index, other).run("What does E-4107 mean?")
    assert len(calls) == 2
    hyde = made(index, "bm25-hyde", generated_tokens=8)  # another prompt: written anew
    assert hyde.written("What does E-4107 mean?") is not None and len(calls) == 3
    Pipeline(index, r.config).run("What does E-4170 mean?")  # another question
    assert len(calls) == 4


def test_an_endpoint_named_by_the_index_is_never_contacted(index):
    config = index.config.updated({"generate": {"backend": "http://127.0.0.1:9/v1"}}, "index folder", "index")
    config = config.with_overrides(retrieve={"retrievers": ["bm25-hyde"], "observe": []})
    with pytest.raises(ConfigError, match="comes from the index"):
        Pipeline(index, config).run("What does E-4107 mean?")


def test_offered_only_where_the_bundled_generator_can_run(index, monkeypatch):
    """A base install (no llama-cpp-python) was offered bm25-hyde in the web's form, which then
    failed on the first question; hiding the package as an install without it does."""
    import importlib.util

    from glassrag.retrieve import offered

    installed = importlib.util.find_spec("llama_cpp") is not None
    assert generated.can_generate(index) == installed
    assert ("bm25-hyde" in offered(index)) == installed
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    assert generated.can_generate(index) == installed  # asked once a process
    generated._installed.cache_clear()
    assert not generated.can_generate(index)
    assert not set(PROMPTS) & set(offered(index)) and "bm25" in offered(index)
    generated._installed.cache_clear()  # the next test's process is this one


def test_the_process_keeps_the_last_questions_words_only(index, monkeypatch):
    class Echo:  # stands in for the model: what is tested is which questions are kept
        def complete(self, messages, max_tokens, temperature, seed):
            return type("Done", (), {"text": messages[-1]["content"]})()

    monkeypatch.setattr(generated, "WRITTEN_KEPT", 2)
    monkeypatch.setattr(generated, "_WRITTEN", {})
    r = made(index)
    r._backend = Echo()
    for q in ("one", "two", "three"):
        assert r.written(q) == q
    assert [key[-1] for key in generated._WRITTEN] == ["two", "three"]


@pytest.fixture
def base_install(monkeypatch):
    """This process as a base install sees it: llama-cpp-python not found (issue 50.4)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    generated._installed.cache_clear()
    yield
    generated._installed.cache_clear()  # the next test's process is this one


def test_a_base_install_refuses_them_with_its_reason_and_what_to_do(index, base_install):
    """`maker` made a retriever that failed on the first question, and the contract test's
    three generated entries failed in a base install."""
    for name in PROMPTS:
        assert RETRIEVERS[name].runs(index) is False
        with pytest.raises(ConfigError) as refused:
            made(index, name)
        assert refused.value.problem.startswith(f"retriever {name} asks a generator for words and none can run here")
        assert "llama-cpp-python" in refused.value.problem
        assert "glassrag[generate]" in refused.value.hint and "--generator URL" in refused.value.hint
        check_entry(index, "retrieve", name, RETRIEVERS[name], "What does E-4107 mean?")  # the contract test's


def test_an_endpoint_the_user_names_makes_them_available_without_the_bundled_model(index, base_install):
    from glassrag.retrieve import offered
    from glassrag.web import settings

    url = "http://127.0.0.1:9/v1"  # nothing listens: making a retriever contacts nothing
    user = index.config.updated({"generate": {"backend": url}}, "--generator", "flag")
    assert all(RETRIEVERS[name].runs(index, user) for name in PROMPTS)
    assert set(PROMPTS) <= set(offered(index, user)) and not set(PROMPTS) & set(offered(index))
    bm25 = BM25(index.counts, user.bm25.k1, user.bm25.b)
    assert isinstance(make_retriever("bm25-decompose", index, user, bm25), GeneratedRetriever)
    # the web's form offers them where the server was started with --generator, and only there
    assert set(PROMPTS) <= set(settings.retrievers(index, url))
    assert not set(PROMPTS) & set(settings.retrievers(index))
    # an endpoint an index folder names does not count (it is never contacted)
    named = index.config.updated({"generate": {"backend": url}}, "index folder", "index")
    assert not RETRIEVERS["bm25-hyde"].runs(index, named)
    with pytest.raises(ConfigError, match="comes from the index"):
        make_retriever("bm25-hyde", index, named, bm25)
