"""The shared cause (experiment/cause.py): which questions no configuration answers, and the
figures that compare them with the answered ones, on inline data."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from glassrag.evaluate.golden import Question, Span
from glassrag.experiment.cause import (answered, configurations, features, locator_type, passage,
                                       shared_cause)
from glassrag.lexical.analyze import Analyzer


def evidence(name: str, corpus: str, ids: list[str], baseline: list[float], change: list[float]) -> dict:
    return {"name": name, "corpora": {corpus: {"per_question": {"answer hit@5": {
        "ids": ids, "baseline": baseline, "change": change}}}}}


def test_a_question_is_answered_when_any_arm_of_any_experiment_answers_it():
    got = answered([evidence("x", "demo", ["a", "b", "c"], [1, 0, 0], [0, 0, 0]),
                    evidence("y", "demo", ["a", "b", "c"], [1, 0, 0], [0, 1, 0]),
                    {"name": "old", "corpora": {"demo": {"metrics": {}}}}])  # no per-question figures
    assert got == {"demo": {"a": True, "b": True, "c": False}}
    assert configurations([evidence("x", "demo", ["a"], [1], [0]), evidence("y", "demo", ["a"], [1], [1])]) == {
        "demo": 3}  # one shared baseline and two changes


@pytest.mark.parametrize("locator, kind", [("page 3", "page"), ("p. 12", "page"), ("§ 2.1 Scope", "section"),
                                           ("sheet Rates", "sheet"), ("", "none"), ("slide 4", "slide")])
def test_locator_type(locator, kind):
    assert locator_type(locator) == kind


CHUNKS = [SimpleNamespace(doc_id="d", text="The  warranty lasts two years from delivery."),
          SimpleNamespace(doc_id="d", text="Returns are accepted within thirty days."),
          SimpleNamespace(doc_id="e", text="The warranty of another product.")]


def test_the_gap_is_the_share_of_question_words_missing_from_the_answering_passage():
    analyze = Analyzer("english")
    q = Question("q1", "How long is the guarantee period of the warranty?", True, kind="paraphrase",
                 answers=(Span("d", "§ 1", "warranty lasts two years"),))
    # the passage is the first chunk only (it holds the span, whitespace aside)
    assert passage(q, CHUNKS) == CHUNKS[0].text
    f = features(q, CHUNKS, analyze)
    # content words: long, guarante, period, warranti; only warranti is in the passage: 3 of 4 missing
    assert sorted(analyze(q.question)) == ["guarante", "long", "period", "warranti"]
    assert f["gap"] == pytest.approx(3 / 4)
    assert (f["question_words"], f["answer_words"], f["kind"], f["locator"]) == (4, 4, "paraphrase", "section")


def test_without_answer_text_the_passage_is_the_answer_document():
    q = Question("s1", "warranty returns", True, answers=(Span("d"),))
    assert passage(q, CHUNKS) == CHUNKS[0].text + "\n" + CHUNKS[1].text
    assert features(q, CHUNKS, Analyzer("english"))["gap"] == 0.0


def test_the_statement_compares_the_never_answered_with_the_answered():
    rows = [{"corpus": "a", "id": "1", "answered": False, "gap": 0.8, "question_words": 5, "answer_words": 9,
             "kind": "paraphrase", "locator": "page"},
            {"corpus": "a", "id": "2", "answered": False, "gap": 0.6, "question_words": 3, "answer_words": 7,
             "kind": "lookup", "locator": "page"},
            {"corpus": "b", "id": "3", "answered": True, "gap": 0.2, "question_words": 4, "answer_words": 5,
             "kind": "lookup", "locator": "section"},
            {"corpus": "b", "id": "4", "answered": True, "gap": 0.0, "question_words": 4, "answer_words": 3,
             "kind": "lookup", "locator": "section"}]
    got = shared_cause(rows)
    assert got["never"] == [{"corpus": "a", "id": "1"}, {"corpus": "a", "id": "2"}]
    gap = next(f for f in got["figures"] if f["figure"] == "gap")
    assert gap["never"]["value"] == pytest.approx((0.8 + 0.6) / 2)
    assert gap["answered"]["value"] == pytest.approx((0.2 + 0.0) / 2)
    assert gap["difference"]["value"] == pytest.approx(0.7 - 0.1)
    # every resample of two values from {0.8, 0.6} minus two from {0.2, 0.0} lies in [0.4, 0.8]
    assert 0.4 - 1e-9 <= gap["difference"]["low"] <= 0.6 <= gap["difference"]["high"] <= 0.8 + 1e-9
    lookup = next(s for s in got["shares"] if s["by"] == "kind" and s["value"] == "lookup")
    assert (lookup["questions"], lookup["never"], lookup["share"]) == (3, 1, pytest.approx(1 / 3))
    assert lookup["low"] < 1 / 3 < lookup["high"]
    assert got["corpora"] == {"a": {"questions": 2, "never": 2}, "b": {"questions": 2, "never": 0}}
