"""The generator as a stage (issue 29): it returns a StageOutput (its generation, the passages
given for the trace's params, its notes) and writes no StageTrace of its own; the loop writes
the one trace of it, like every other stage's. A scripted backend stands in for a model."""

from __future__ import annotations

from typing import Any

import glassrag.generate as generate
from glassrag.generate import GENERATORS, Generator
from glassrag.generate.base import Answering, Completion
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.schema import Generation, StageTrace
from glassrag.stage import Decision, StageOutput

QUESTION = "What does E-4107 mean?"


class Scripted:
    """A backend that answers the same sentence, and says how often it was asked."""

    model = "scripted"
    answering = Answering()

    def __init__(self) -> None:
        self.asked = 0

    def params(self) -> dict[str, Any]:
        return {"backend": "scripted", "model": self.model}

    def complete(self, messages: list[dict[str, str]], max_tokens: int, temperature: float, seed: int,
                 stop: Any = (), repeat_penalty: float = 1.0) -> Completion:
        self.asked += 1
        return Completion("E-4107 is a tilt sensor error.", 40, 7, 1.5, "stop")


def packed(index) -> StageTrace:
    """The budget's trace of the question, with the generator off."""
    return Pipeline(index, index.config).run(QUESTION).stage("budget")


def test_the_generator_returns_an_output_and_writes_no_trace_of_its_own(index):
    generator = Generator(index, index.config.generate, Scripted())
    hits = packed(index).hits
    out = generator.run(Query(QUESTION, index.analyzer(QUESTION)), {"budget": StageOutput(hits),
                                                                    "answer": StageOutput(decision=Decision(False, ""))})
    assert isinstance(out, StageOutput) and not isinstance(out, StageTrace)
    assert isinstance(out.generation, Generation) and out.generation.text == "E-4107 is a tilt sensor error."
    assert out.hits == () and out.traced == {"given": [h.chunk_id for h in hits[:5]]}
    assert "tokens: 40 in, 7 out" in out.notes
    assert not any(isinstance(v, StageTrace) for v in vars(out).values())
    assert "StageTrace" not in vars(generate)  # the module cannot build one


def test_a_declined_answer_is_not_generated_and_the_backend_not_asked(index):
    backend = Scripted()
    generator = Generator(index, index.config.generate, backend)
    declined = StageOutput(decision=Decision(True, "no passage matched any word of the question"))
    out = generator.run(Query(QUESTION, ["e", "4107"]), {"budget": StageOutput(), "answer": declined})
    assert backend.asked == 0 and out.generation is None and out.traced == {}
    assert out.notes == ("not generated: no passage matched any word of the question",)


def test_the_loop_writes_the_generators_one_trace(index, monkeypatch):
    backend = Scripted()
    monkeypatch.setattr(generate, "make_backend", lambda *a, **k: backend)
    config = index.config.with_overrides(generate={"enabled": True})
    pipeline = Pipeline(index, config)
    answer = pipeline.run(QUESTION)
    traces = [t for t in answer.trace if t.kind == "generate"]
    assert len(traces) == 1 and traces[0] is answer.trace[-1]
    t = traces[0]
    budget = answer.stage("budget")
    assert (t.name, t.inputs, t.hits, t.n_in) == ("generate", ("budget",), (), len(budget.hits))
    assert t.params == {**pipeline.generator.params(), "given": [h.chunk_id for h in budget.hits[:5]]}
    assert answer.generation is not None and answer.generation.text == "E-4107 is a tilt sensor error."


def test_the_generator_is_made_by_its_entry_only_when_on(index):
    entry = GENERATORS["generate"]
    assert entry.make(index, index.config, None) is None
    term, text = entry.describe_score("generate", {"backend": "smollm2"})
    assert term == "generator" and "smollm2" in text
