"""The metric table (schema/metric.py) and the typed question records (schema/records.py):
every name a run writes has a spec, which way it is better and how it is tested come from
the spec alone, and a record reads back what it wrote, in the run file's field order."""

from __future__ import annotations

import pytest

from glassrag.errors import UnknownNameError
from glassrag.evaluate.grade import SCORES
from glassrag.evaluate.summary import answer_specs, stage_specs
from glassrag.schema import MCNEMAR, RANDOMISATION, SPECS, MetricSpec, flat_spec, metric_spec
from glassrag.schema.records import QuestionRecord, StageRecord


def test_a_spec_names_itself_with_its_cutoff():
    hit = SPECS["hit"]
    assert (hit.name, hit.at(5).name, hit.at(5).k, hit.at(5).base) == ("hit", "hit@5", 5, "hit")
    assert metric_spec("ndcg@10") == SPECS["ndcg"].at(10)
    assert metric_spec("declined_answerable") == SPECS["declined_answerable"]
    assert MetricSpec.from_dict(SPECS["mrr"].at(10).to_dict()) == SPECS["mrr"].at(10)


def test_a_flat_name_is_read_after_its_section_or_stage():
    assert flat_spec("answer hit@5") == SPECS["hit"].at(5)
    assert flat_spec("lsa vector_hit") == SPECS["vector_hit"]
    assert flat_spec("generation failed").better == "lower"


@pytest.mark.parametrize("name", ["hits@5", "hit@five", "hit@", "hit@0", "answer nope"])
def test_an_unknown_name_lists_the_valid_ones(name: str):
    with pytest.raises(UnknownNameError) as caught:
        flat_spec(name)
    assert "hit[@k]" in caught.value.hint and "declined_answerable" in caught.value.hint


def test_a_spec_must_say_what_kind_and_which_way():
    with pytest.raises(ValueError):
        MetricSpec("x", "binary")
    with pytest.raises(ValueError):
        MetricSpec("x", "0/1", "up")


def test_which_way_is_better():
    lower = {base for base, spec in SPECS.items() if spec.better == "lower"}
    assert lower == {"declined_answerable", "rank1_buried", "foreign_citations", "leaked_tags", "refused_answerable", "hedged",
                     "failed"}


def test_the_paired_test_follows_the_kind_but_for_four_kept_as_they_were():
    as_graded = {base for base, spec in SPECS.items() if spec.zero_one and spec.paired_test == RANDOMISATION}
    assert as_graded == {"locator_hit", "reader_accuracy", "budget_recall", "reader_declined_unanswerable"}
    assert all(spec.paired_test == MCNEMAR for base, spec in SPECS.items() if spec.zero_one and base not in as_graded)
    assert all(spec.paired_test == RANDOMISATION for spec in SPECS.values() if not spec.zero_one)


def test_every_name_a_run_writes_has_a_spec():
    k = 5
    names = [s.name for s in [*stage_specs(k), *answer_specs(k)]] + [
        "source_recall@5", "answer_intact", "rank1_buried@5", "answer_visible@5", "locator_hit@5", "declined_answerable",
        "declined_unanswerable", "declined_offtopic", "reader_accuracy", "budget_recall",
        "reader_declined_unanswerable", "vector_hit", "mean_top_similarity", "declined", *SCORES, "failed"]
    for name in names:
        assert metric_spec(name).name == name


RECORD = {"id": "q1", "question": "What does E-4107 mean?", "kind": "identifier", "split": "test",
          "in_budget": True, "reader_correct": False, "locator_hit": None, "answerable": True, "declined": False,
          "reason": None, "visible": True, "intact": True, "answer_docs": ["manual"], "cause": None,
          "stages": {"bm25": {"kind": "retrieve", "family": "lexical", "first_relevant_rank": 1, "top_score": 7.5,
                              "top": ["c1", "c2"], "source_recall": 1.0, "ms": 0.25}},
          "ranking": [["c1", "manual", 7.5]], "quote": {"found": True, "text": "E-4107 means ..."},
          "gate_signals": {"top_score": 7.5}, "generation": {"failed": False, "text": "it means ..."},
          "metrics": {"ranking": {"hit@5": 1.0}, "answer": {"hit@5": 1.0}}}


def test_a_record_reads_back_what_it_wrote_in_the_run_files_order():
    record = QuestionRecord.from_dict(RECORD)
    assert record.stages["bm25"] == StageRecord("retrieve", "lexical", 1, 7.5, ("c1", "c2"), 1.0, 0.25)
    assert record.to_dict() == RECORD and list(record.to_dict()) == list(RECORD)
    assert list(record.to_dict()["stages"]["bm25"]) == list(RECORD["stages"]["bm25"])
    without = {key: v for key, v in RECORD.items() if key != "generation"}
    assert QuestionRecord.from_dict(without).to_dict() == without  # no generation key when there was none


def test_an_old_record_with_only_the_required_fields_reads():
    record = QuestionRecord.from_dict({"id": "q9", "answerable": False, "stages": {"gate": {"kind": "gate"}}})
    assert (record.id, record.answerable, record.stages["gate"].kind, record.metrics) == ("q9", False, "gate", {})
    assert record.metric("answer", "hit@5") == 0.0


def test_metrics_are_added_to_a_new_record():
    record = QuestionRecord.from_dict({**RECORD, "metrics": {}})
    measured = record.with_metrics({"answer": {"declined_answerable": 0.0}})
    assert record.metrics == {} and measured.metrics == {"answer": {"declined_answerable": 0.0}}
    assert measured.flat_metrics() == {"answer declined_answerable": 0.0}
