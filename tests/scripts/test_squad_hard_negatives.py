"""The hard negatives for the next answerability model (scripts/squad_hard_negatives.py): an
entity-overlap negative is the same-article paragraph nearest the question that does not
hold its answer; an edited question swaps one slot for one of the article's that its own
paragraph never mentions; the output is the same every run; the committed files hold what
they say."""

import csv
import gzip
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "squad_hard_negatives.py"
SQUAD = ROOT / "training" / "squad"


@pytest.fixture(scope="module")
def hard():
    spec = importlib.util.spec_from_file_location("squad_hard_negatives", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


P0 = ("The Alps stretch about 1,200 kilometres across eight countries. Mont Blanc is the highest "
      "peak, first climbed in 1786 by Jacques Balmat.")
P1 = "The Matterhorn was first climbed in 1865 by Edward Whymper, who set out from Zermatt."
P2 = ("Tourism in the Alps began in the 19th century. Visitors from Britain came to Chamonix to see "
      "Mont Blanc, and in 1924 Chamonix held the first Winter Olympics.")
P3 = ("Jacques Balmat and Michel Paccard reached the summit of Mont Blanc in 1786, a climb paid for "
      "by Horace-Bénédict de Saussure.")
ARTICLE = {"Alps": [
    {"text": P0, "qas": [{"question": "Who first climbed Mont Blanc in 1786?", "answers": ["Jacques Balmat"]}]},
    {"text": P1, "qas": [{"question": "Who first climbed the Matterhorn?", "answers": ["Edward Whymper"]}]},
    {"text": P2, "qas": [{"question": "When did Chamonix hold the Winter Olympics?", "answers": ["1924"]}]},
    {"text": P3, "qas": [{"question": "Who paid for the first climb of Mont Blanc?",
                          "answers": ["Horace-Bénédict de Saussure"]}]},
]}
QUESTIONS = [{"question": qa["question"], "article": "Alps", "own": [p["text"]]}
             for p in ARTICLE["Alps"] for qa in p["qas"]]


def test_the_same_input_gives_the_same_file_twice(hard, tmp_path):
    first, second = hard.hard_rows(QUESTIONS, ARTICLE), hard.hard_rows(QUESTIONS, ARTICLE)
    assert first == second and any(r["kind"] == "edited-question" for r in first)
    hard.write_gz(tmp_path / "a" / "hard.jsonl.gz", first)  # gzip's header holds the file's name
    hard.write_gz(tmp_path / "b" / "hard.jsonl.gz", second)
    assert (tmp_path / "a" / "hard.jsonl.gz").read_bytes() == (tmp_path / "b" / "hard.jsonl.gz").read_bytes()
    assert hard.hard_rows(QUESTIONS, ARTICLE, seed=hard.SEED) == first  # the default is the stated seed


def test_every_row_has_question_passage_label_kind_and_each_question_its_own_first(hard):
    rows = hard.hard_rows(QUESTIONS, ARTICLE)
    assert all({"question", "passage", "label", "kind"} <= r.keys() for r in rows)
    assert [r["kind"] for r in rows if r["label"] == 1] == ["own"] * 4
    assert {r["kind"] for r in rows if r["label"] == 0} == {"entity-overlap", "edited-question"}


def test_entity_overlap_takes_the_nearest_paragraph_without_the_answer(hard):
    paragraphs = [p["text"] for p in ARTICLE["Alps"]]
    bm25 = hard.article_bm25(paragraphs)
    question = "Who first climbed Mont Blanc in 1786?"
    # nearest by BM25 is P3 (Mont Blanc, 1786, climb) ...
    assert hard.entity_overlap(question, [P0], [], paragraphs, bm25) == P3
    # ... but P3 names the climber, so the negative is the next nearest
    got = hard.entity_overlap(question, [P0], ["Jacques Balmat"], paragraphs, bm25)
    assert got not in (P0, P3) and "Balmat" not in got


def test_an_answer_in_another_form_still_counts_as_held(hard):
    assert hard.holds_answer(P0, ["1200 kilometres"])           # thousands separator
    assert hard.holds_answer(P2, ["held the first Winter Olympics,"])  # article, case, punctuation
    assert not hard.holds_answer(P2, ["1925"])
    paragraphs = [P0, "Its length is 1200 kilometres, Alps to Alps.", "The Alps have glaciers."]
    got = hard.entity_overlap("How long are the Alps in kilometres?", [P0], ["1,200 kilometres"],
                              paragraphs, hard.article_bm25(paragraphs))
    assert got == "The Alps have glaciers."


def test_no_entity_overlap_when_no_other_paragraph_shares_a_word(hard):
    paragraphs = [P0, "Glaciers melt."]
    assert hard.entity_overlap("Who first climbed Mont Blanc?", [P0], ["Jacques Balmat"], paragraphs,
                               hard.article_bm25(paragraphs)) is None


def test_an_edited_question_s_new_word_is_absent_from_its_paragraph(hard):
    for r in hard.hard_rows(QUESTIONS, ARTICLE):
        if r["kind"] == "edited-question":
            assert r["question"] == r["original"].replace(r["swap"]["from"], r["swap"]["to"], 1)
            assert r["swap"]["from"] in r["passage"]
            assert r["swap"]["to"] not in r["passage"]


def test_a_name_is_swapped_for_one_the_article_has_beside_the_same_word(hard):
    paragraphs = ["Hikers in Zermatt climb.", "Hikers in Chamonix ski.", "Zermatt has no cars, but Bern has trams."]
    vocab = hard.vocabulary(paragraphs)
    import random
    question, swap = hard.edited("Who lives in Zermatt?", [paragraphs[0]], vocab, random.Random(0))
    # Bern is never "in" anything nor before "?" here: only Chamonix stands where Zermatt stood
    assert (question, swap) == ("Who lives in Chamonix?", {"type": "name", "from": "Zermatt", "to": "Chamonix"})


def test_a_number_is_swapped_for_one_of_as_many_digits_and_a_month_for_a_month(hard):
    import random
    vocab = hard.vocabulary(["It has 12 peaks, 340 huts and 15 lakes.", "Snow falls in May and in June."])
    assert hard.edited("Which 12 peaks?", ["It has 12 peaks."], vocab, random.Random(0))[1] == \
        {"type": "number", "from": "12", "to": "15"}
    assert hard.edited("What falls in May?", ["Snow falls in May."], vocab, random.Random(0))[1] == \
        {"type": "month", "from": "May", "to": "June"}


def test_no_edit_when_every_replacement_is_in_the_paragraph_or_the_slot_is_not(hard):
    import random
    vocab = hard.vocabulary(["Hikers in Zermatt climb.", "Hikers in Chamonix ski."])
    both = "Hikers in Zermatt and in Chamonix meet."
    assert hard.edited("Who lives in Zermatt?", [both], vocab, random.Random(0)) is None
    # the question's Zermatt is not in its paragraph: nothing the paragraph anchors on changes
    assert hard.edited("Who lives in Zermatt?", ["Hikers ski."], vocab, random.Random(0)) is None


def test_a_question_s_capitalised_first_word_is_no_name(hard):
    assert [n for _, _, n, _, _ in hard.names("Sometimes the Alps were crossed by Hannibal of Carthage.")] == \
        ["Sometimes", "Alps", "Hannibal of Carthage"]
    vocab = hard.vocabulary(["They crossed Alps. Sometimes they walked, sometimes they rode."])
    assert hard.slots("Sometimes they walked?", "Sometimes they walked.", vocab) == []


@pytest.mark.parametrize("name, role", [("pairs-hard.jsonl.gz", "train"), ("heldout-hard.jsonl.gz", "heldout")])
def test_the_committed_files_hold_what_they_say(hard, name, role):
    with open(SQUAD / "articles.tsv", encoding="utf-8", newline="") as f:
        roles = {r["article"]: r["role"] for r in csv.DictReader(f, delimiter="\t")}
    with gzip.open(SQUAD / name, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    assert len(rows) > 1000
    assert all({"question", "passage", "label", "kind"} <= r.keys() for r in rows)
    assert {(r["label"], r["kind"]) for r in rows} == {(1, "own"), (0, "entity-overlap"), (0, "edited-question")}
    assert {roles[r["article"]] for r in rows} == {role}
    own: dict[str, set[str]] = {}
    for r in rows:
        if r["label"] == 1:
            own.setdefault(r["question"], set()).add(r["passage"])
    for r in rows:
        if r["kind"] == "entity-overlap":
            assert r["passage"] not in own[r["question"]]
        elif r["kind"] == "edited-question":
            old, new = r["swap"]["from"], r["swap"]["to"]
            assert r["passage"] in own[r["original"]]
            assert old in r["original"] and new in r["question"] and r["question"] != r["original"]
            if r["swap"]["type"] in ("name", "month"):
                assert hard.has_name(r["passage"], old)
                assert not hard.word_set(new) & hard.word_set(r["passage"])
            else:
                assert hard.has_number(r["passage"], old) and not hard.has_number(r["passage"], new)


def test_the_held_out_hard_file_s_own_rows_are_the_held_out_file_s(hard):
    def own(name):
        with gzip.open(SQUAD / name, "rt", encoding="utf-8") as f:
            return [(r["question"], r["passage"]) for r in map(json.loads, f) if r["label"] == 1]
    assert own("heldout-hard.jsonl.gz") == own("heldout.jsonl.gz")


def test_a_hyphenated_compound_is_swapped_only_for_another(hard):
    vocab = hard.vocabulary(["The Alps stretch far, and the French-Italian border runs along them.",
                             "Goats live in the Jura and the Swiss-Italian valleys."])
    assert hard.name_type("French-Italian") == "name1-" != hard.name_type("Alps")
    question, own = "How far do the Alps stretch?", ["The Alps stretch far."]
    [(_, _, old, kind, around)] = hard.slots(question, own[0], vocab)
    assert hard.candidates(kind, old, around, question, own, vocab) == ["Jura"]
