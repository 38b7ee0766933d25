"""A run with generation on, for real: the bundled SmolLM2-135M answers four handbook
questions, and the run's generation section must be the per-answer scores summarised, each
over the answers it applies to. What the model writes is not pinned (another CPU build may
pick other words); the summary is checked against the records the run itself holds. Small
and fast enough for mutmut on evaluate/runs.py (issue 13: the generation branch of
evaluate(), which no test in that run's selection reached)."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_cpp", reason="the bundled generator needs pip install 'glassrag[generate]'")

from glassrag.evaluate.golden import Question, Span  # noqa: E402
from glassrag.evaluate.grade import SCORES  # noqa: E402
from glassrag.evaluate.runs import evaluate  # noqa: E402
from glassrag.evaluate.summary import interval  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402
from glassrag.schema import SPECS  # noqa: E402
from glassrag.stats import wilson_interval  # noqa: E402

SENSOR = "E-4107 means the tilt sensor lost calibration."
QUESTIONS = [
    Question("sensor", "What does E-4107 mean?", True, answers=(Span("manual", "§ 2.1 Sensor errors", SENSOR),),
             must_contain=("tilt sensor",)),
    Question("mileage", "How are private cars reimbursed?", True, answers=(Span("travel", "§ Mileage"),)),
    Question("gym", "Is there a gym membership for the tilt sensor team?", False),
    Question("tripod", "Which tripod fits the scanner?", False),
]


@pytest.fixture
def run(index):
    config = index.config.with_overrides(generate={"enabled": True, "passages": 2, "max_tokens": 12},
                                         gate={"enabled": False})
    return evaluate(Pipeline(index, config), QUESTIONS, golden_path="inline")


def test_every_answer_is_generated_and_scored(run):
    assert [r.id for r in run.questions] == ["sensor", "mileage", "gym", "tripod"]
    for r in run.questions:
        g = r.generation
        assert g["text"] and g["failed"] is False
        assert r.metric("generation", "failed", None) == 0.0
    assert run.generation is not None and run.generation.stage == "generate"


def test_each_score_is_summarised_over_the_answers_it_applies_to(run):
    summary = run.generation.metrics
    assert list(summary) == [*SCORES, "failed"]
    for name in SCORES:
        applies = [r for r in run.questions if r.generation.get(name) is not None]
        values = [float(r.generation[name]) for r in applies]
        assert summary[name] == interval(SPECS[name], values), name
        for r in run.questions:
            assert r.metric("generation", name, None) == (float(r.generation[name]) if r in applies
                                                          else None), (name, r.id)
    # by hand: two answerable questions, two unanswerable; a must-contain string on one
    counts = {name: summary[name]["n"] for name in SCORES}
    assert counts["refused_answerable"] == 2 and counts["refused_unanswerable"] == 2
    assert counts["contains_answer"] == 1
    assert counts["foreign_citations"] == counts["leaked_tags"] == counts["cited"] == counts["hedged"] == 4
    assert summary["failed"] == {"value": 0.0, "low": 0.0, "high": wilson_interval(0, 4)[1], "n": 4}


def test_failed_generations_are_counted_and_nothing_they_did_not_write_is_scored(index):
    from glassrag.generate.local import LocalModel

    config = index.config.with_overrides(generate={"enabled": True, "passages": 2, "max_tokens": 8},
                                         gate={"enabled": False})
    pipeline = Pipeline(index, config)
    pipeline.generator.backend = LocalModel("smollm2", context=64)  # no prompt fits in 64 tokens
    run = evaluate(pipeline, QUESTIONS[:3])
    summary = run.generation.metrics
    assert summary["failed"] == {"value": 1.0, "low": wilson_interval(3, 3)[0], "high": 1.0, "n": 3}
    assert all(summary[name] == {"value": None, "low": None, "high": None, "n": 0} for name in SCORES)
    assert [r.metrics["generation"] for r in run.questions] == [{"failed": 1.0}] * 3


def test_without_generation_the_run_has_no_generation_section(index):
    run = evaluate(Pipeline(index, index.config.with_overrides(gate={"enabled": False})), QUESTIONS)
    assert run.generation is None
    assert all(r.generation is None and "generation" not in r.to_dict() and "generation" not in r.metrics
               for r in run.questions)
