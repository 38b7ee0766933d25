import json
from pathlib import Path

import pytest

from glassrag.errors import GoldenError
from glassrag.evaluate.golden import check_against, load_golden

GOOD = {"id": "q1", "question": "What does E-4107 mean?", "split": "train", "kind": "identifier",
        "answerable": True,
        "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors",
                     "text": "E-4107 means the tilt sensor lost calibration."}],
        "must_contain": ["E-4107"]}


def write(tmp_path: Path, rows) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_good_file_loads_with_splits(tmp_path: Path):
    second = {**GOOD, "id": "q2", "split": "test"}
    unanswerable = {"id": "q3", "question": "Is there a gym?", "answerable": False,
                    "kind": "unanswerable", "split": "test"}
    path = write(tmp_path, [GOOD, second, unanswerable])
    assert [q.id for q in load_golden(path)] == ["q1", "q2", "q3"]
    assert [q.id for q in load_golden(path, "train")] == ["q1"]
    assert load_golden(path)[0].answers[0].locator == "§ 2.1 Sensor errors"


def test_every_bad_line_is_reported_with_its_number(tmp_path: Path):
    rows = [
        GOOD,
        "{not json",
        {"id": "q2", "question": "x?"},
        {**GOOD, "id": "q3", "split": "dev"},
        {**GOOD, "id": "q4", "kind": "trivia"},
        {**GOOD, "id": "q5", "must_contain": ["E-9999"]},
        {**GOOD},
        {**GOOD, "id": "q6", "answerable": False},
        {**GOOD, "id": "q7", "kind": "multi-doc"},
    ]
    with pytest.raises(GoldenError) as info:
        load_golden(write(tmp_path, rows))
    problems = info.value.problems
    assert [line for line, _ in problems] == [2, 3, 4, 5, 6, 7, 8, 9]
    reasons = dict(problems)
    assert "not valid JSON" in reasons[2]
    assert reasons[3] == "missing field 'answerable'"
    assert reasons[4].startswith("unknown split 'dev'")
    assert reasons[5].startswith("unknown kind 'trivia'")
    assert reasons[6] == "must_contain 'E-9999' occurs in none of the answer texts"
    assert reasons[7] == "id 'q1' already used on line 1"
    assert reasons[8] == "an unanswerable question must have no answers"
    assert reasons[9] == "kind 'multi-doc' needs answers from two or more documents"
    assert "nothing was evaluated" in info.value.hint


def test_labels_checked_against_the_index(tmp_path: Path, index):
    rows = [GOOD,
            {**GOOD, "id": "q2", "answers": [{"doc": "nomanual", "text": "x"}], "must_contain": []},
            {**GOOD, "id": "q3", "answers": [{"doc": "manual", "locator": "§ 9 Nothing"}],
             "must_contain": []},
            {**GOOD, "id": "q4", "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors",
                                              "text": "E-4107 means the battery"}], "must_contain": []}]
    problems = check_against(load_golden(write(tmp_path, rows)), index.documents)
    assert problems == [
        (2, "q2: document 'nomanual' is not in the index"),
        (3, "q3: manual has no locator '§ 9 Nothing'"),
        (4, "q4: answer text is not verbatim in manual § 2.1 Sensor errors: 'E-4107 means the battery'"),
    ]


def test_whitespace_differences_are_allowed(tmp_path: Path, index):
    row = {**GOOD, "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors",
                                "text": "E-4107   means the\ntilt sensor lost calibration."}]}
    assert check_against(load_golden(write(tmp_path, [row])), index.documents) == []


def test_missing_file_and_empty_file(tmp_path: Path):
    with pytest.raises(GoldenError, match="no such file"):
        load_golden(tmp_path / "none.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(GoldenError, match="no questions"):
        load_golden(tmp_path / "empty.jsonl")


def test_shape_and_label_problems_are_reported_in_one_pass(tmp_path: Path, index):
    """A line with a shape problem had its labels checked only once the shape was fixed: a
    second run found the unknown document. The docs promise every problem at once."""
    rows = [GOOD,
            {**GOOD, "id": "q2", "kind": "trivia", "answers": [{"doc": "nomanual", "text": "x"}],
             "must_contain": []},
            {**GOOD, "id": "q1", "answers": [{"doc": "manual", "locator": "§ 9 Nothing"}], "must_contain": []}]
    with pytest.raises(GoldenError) as info:
        load_golden(write(tmp_path, rows), documents=index.documents)
    assert info.value.problems == [
        (2, "unknown kind 'trivia'; use one of lookup, paraphrase, identifier, named-term, multi-doc, "
            "table, outdated, unanswerable"),
        (2, "q2: document 'nomanual' is not in the index"),
        (3, "id 'q1' already used on line 1"),
        (3, "q1: manual has no locator '§ 9 Nothing'"),
    ]
