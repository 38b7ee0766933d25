"""TREC run and qrels files written and read line by line, on hand-made runs, questions and
chunks (the end-to-end check against pytrec_eval is in test_beir_trec.py)."""

from pathlib import Path

import pytest

from glassrag.errors import GoldenError
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.trec import read_qrels, read_run, write_qrels, write_run
from glassrag.schema import Chunk, QuestionRecord


def record(qid: str, *ranking: tuple[str, str, float]) -> QuestionRecord:
    return QuestionRecord(qid, "?", True, ranking=ranking)


RUN = (record("q1", ("c1", "d1", 3.5), ("c2", "d1", 2.0), ("c3", "d2", 1.25)),
       record("q2"),
       record("q3", ("c3", "d2", 0.1234567)))


def test_a_run_at_document_level_names_each_document_once_by_its_best_chunk(tmp_path: Path):
    assert write_run(RUN, tmp_path / "run.trec") == 3
    assert (tmp_path / "run.trec").read_text() == (
        "q1 Q0 d1 1 3.500000 glassrag\n"
        "q1 Q0 d2 2 1.250000 glassrag\n"
        "q3 Q0 d2 1 0.123457 glassrag\n")


def test_a_run_at_chunk_level_names_every_chunk_with_its_tag(tmp_path: Path):
    assert write_run(RUN, tmp_path / "run.trec", level="chunk", tag="mine") == 4
    assert (tmp_path / "run.trec").read_text() == (
        "q1 Q0 c1 1 3.500000 mine\n"
        "q1 Q0 c2 2 2.000000 mine\n"
        "q1 Q0 c3 3 1.250000 mine\n"
        "q3 Q0 c3 1 0.123457 mine\n")


def test_a_run_with_nothing_ranked_is_an_empty_file(tmp_path: Path):
    assert write_run([record("q")], tmp_path / "run.trec") == 0
    assert (tmp_path / "run.trec").read_text() == ""


QUESTIONS = [
    Question("q1", "?", True, answers=(Span("d1", grade=1), Span("d2", grade=2), Span("d1", grade=3),
                                       Span("d1", grade=2))),
    Question("gym", "?", False),
    Question("q2", "?", True, answers=(Span("d3", grade=2), Span("d3", grade=1))),
]


def test_qrels_at_document_level_keep_each_documents_highest_grade(tmp_path: Path):
    assert write_qrels(QUESTIONS, tmp_path / "q.trec") == 3
    assert (tmp_path / "q.trec").read_text() == "q1 0 d1 3\nq1 0 d2 2\nq2 0 d3 2\n"
    assert read_qrels(tmp_path / "q.trec") == {"q1": {"d1": 3, "d2": 2}, "q2": {"d3": 2}}


def test_qrels_of_unanswerable_questions_only_are_an_empty_file(tmp_path: Path):
    assert write_qrels(QUESTIONS[1:2], tmp_path / "q.trec") == 0
    assert (tmp_path / "q.trec").read_text() == ""


def chunk(doc: str, text: str, position: int) -> Chunk:
    return Chunk.make(doc, "p. 1", text, 0, len(text), position)


def test_qrels_at_chunk_level_name_the_chunks_that_hold_an_answer(tmp_path: Path):
    chunks = [chunk("d1", "Annual leave is 25 days.", 0), chunk("d1", "Book it two weeks ahead.", 1),
              chunk("d1", "Annual leave is 25 days. Book it two weeks ahead.", 2),
              chunk("d2", "Sick leave needs a note.", 0)]
    q = Question("q1", "?", True, answers=(Span("d1", text="25 days", grade=1),
                                           Span("d1", text="two weeks", grade=3)))
    assert write_qrels([q, QUESTIONS[1]], tmp_path / "q.trec", level="chunk", judge=Judge(chunks)) == 3
    # the chunk that holds both answers takes the higher grade
    assert read_qrels(tmp_path / "q.trec") == {"q1": {chunks[0].id: 1, chunks[1].id: 3, chunks[2].id: 3}}
    with pytest.raises(AssertionError, match="chunk-level qrels need the index's chunks"):
        write_qrels([q], tmp_path / "x.trec", level="chunk")


def test_a_run_is_read_best_score_first_then_by_rank(tmp_path: Path):
    (tmp_path / "run.trec").write_text(
        "q1 Q0 low 1 0.5 x\n"
        "\n"
        "q1 Q0 high 3 2.0 x\n"
        "q1 Q0 tie-b 2 1.0\n"
        "q1 Q0 tie-a 4 1.0 x\n"
        "q2 Q0 only 1 -1 x\n")
    assert read_run(tmp_path / "run.trec") == {"q1": ["high", "tie-b", "tie-a", "low"], "q2": ["only"]}


def test_a_run_written_reads_back_in_its_order(tmp_path: Path):
    write_run(RUN, tmp_path / "run.trec", level="chunk")
    assert read_run(tmp_path / "run.trec") == {"q1": ["c1", "c2", "c3"], "q3": ["c3"]}


def test_bad_run_lines_are_all_reported_by_line(tmp_path: Path):
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 2.0 x\nq1 Q0 d2 1\nq1 Q0 d3 one 1.0 x\nq1 Q0 d4 2 high x\n")
    with pytest.raises(GoldenError) as info:
        read_run(tmp_path / "run.trec")
    assert info.value.path == str(tmp_path / "run.trec")
    assert info.value.problems == [
        (2, "a run line is: query-id Q0 doc-id rank score [tag]"),
        (3, "rank 'one' or score '1.0' is not a number"),
        (4, "rank '2' or score 'high' is not a number")]


def test_qrels_are_read_with_their_grades(tmp_path: Path):
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n\nq1 0 d2 0\nq2 0 d1 2\nq1 0 d1 3\n")
    # a repeated pair: the last line counts
    assert read_qrels(tmp_path / "q.trec") == {"q1": {"d1": 3, "d2": 0}, "q2": {"d1": 2}}


def test_bad_qrels_lines_are_all_reported_by_line(tmp_path: Path):
    (tmp_path / "q.trec").write_text("q1 0 d1 1\nq1 0 d2\nq1 0 d3 1 extra\nq1 0 d4 high\nq1 0 d5 1.5\n")
    with pytest.raises(GoldenError) as info:
        read_qrels(tmp_path / "q.trec")
    assert info.value.path == str(tmp_path / "q.trec")
    assert info.value.problems == [
        (2, "a qrels line is: query-id 0 doc-id grade"),
        (3, "a qrels line is: query-id 0 doc-id grade"),
        (4, "grade 'high' is not a whole number"),
        (5, "grade '1.5' is not a whole number")]
