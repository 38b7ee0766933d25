"""The cross-encoder's training pairs (scripts/squad_prepare.py): the answer-removed
negative is its own paragraph without the sentences that hold the answer, and nothing else."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "squad_prepare.py"


@pytest.fixture(scope="module")
def prepare():
    spec = importlib.util.spec_from_file_location("squad_prepare", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PARAGRAPH = ("The Alps stretch across eight countries. They are about 1,200 km long. "
             "Mont Blanc is the highest peak. \"Alp\" is an old word for a mountain pasture.")


def test_the_sentence_holding_the_answer_goes_and_the_rest_stays(prepare):
    assert prepare.without_answer(PARAGRAPH, ["1,200 km"]) == (
        "The Alps stretch across eight countries. Mont Blanc is the highest peak. "
        "\"Alp\" is an old word for a mountain pasture.")


def test_every_sentence_with_any_answer_goes(prepare):
    out = prepare.without_answer(PARAGRAPH, ["eight countries", "Mont Blanc"])
    assert out == "They are about 1,200 km long. \"Alp\" is an old word for a mountain pasture."


def test_no_negative_when_too_little_is_left_or_nothing_was_taken(prepare):
    assert prepare.without_answer(PARAGRAPH, ["Alp", "km", "Mont"]) is None  # none left
    assert prepare.without_answer(PARAGRAPH, ["Matterhorn"]) is None   # nothing taken out
    assert prepare.without_answer("One sentence. Two sentences.", ["One"]) is None  # one left


def test_no_negative_when_the_answer_spans_a_sentence_end(prepare):
    # "long. Mont" is in no single sentence: the first sentence goes for the other answer, and
    # the check on the joined text keeps a passage that still holds one from being labelled 0
    assert prepare.without_answer(PARAGRAPH, ["eight countries", "long. Mont"]) is None


def test_a_question_s_rows_come_together_its_answer_removed_after_its_own(prepare):
    own = {"question": "How long are the Alps?", "passage": PARAGRAPH, "label": 1, "kind": "own",
           "article": "Alps", "answers": ["1,200 km"]}
    other = {"question": "How long are the Alps?", "passage": "Paris is in France. It is big.",
             "label": 0, "kind": "other-article", "article": "Alps"}
    second = {"question": "What is the highest peak?", "passage": PARAGRAPH, "label": 1, "kind": "own",
              "article": "Alps", "answers": ["Mont Blanc"]}
    groups = prepare.grouped([other, second, own])
    assert [[r["kind"] for r in g] for g in groups] == [["other-article", "own", "answer-removed"],
                                                        ["own", "answer-removed"]]
    removed = groups[0][2]
    assert removed["label"] == 0 and "answers" not in removed
    assert "1,200" not in removed["passage"]


def test_rows_are_written_without_their_answers(prepare, tmp_path):
    import gzip
    import json
    row = {"question": "How long are the Alps?", "passage": PARAGRAPH, "label": 1, "kind": "own",
           "article": "Alps", "answers": ["1,200 km"]}
    prepare.write_gz(tmp_path / "p.jsonl.gz", [row])
    with gzip.open(tmp_path / "p.jsonl.gz", "rt") as f:
        assert [json.loads(line) for line in f] == [{k: v for k, v in row.items() if k != "answers"}]


@pytest.mark.parametrize("question, names", [
    ("Chopin is closely associated with what era?", True),       # a name first
    ("When did Beyonce partner with C&A to sell fashion in Brazil?", True),
    ("What song won Best R&B Performance in the 43 Annual Grammy Awards?", True),
    ("How is this type of hunting done?", False),                # leans on its paragraph
    ("Who operates the parking meters?", False),
    ("In what year did the subway begin operation?", False),     # "In" starts, names nothing
    ("What can I do?", False),                                   # "I" names nothing
    ("", False),
])
def test_an_off_topic_question_must_name_its_subject(prepare, question, names):
    assert prepare.names_its_subject(question) is names


def test_the_bundled_off_topic_set_holds_only_questions_that_name_their_subject(prepare):
    import json
    path = SCRIPT.parents[1] / "src" / "glassrag" / "data" / "offtopic.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 300 and all(prepare.names_its_subject(r["question"]) for r in rows)
    assert not any("Hunting" in r["source"] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
