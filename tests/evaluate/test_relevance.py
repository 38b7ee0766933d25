"""The relevance judge, what counts as visible and what counts as a correct quote, on hand-made
chunks (written after mutation testing found `visible`, `quote_correct` and the unit ranking's
edge cases untested: issue 13, docs/testing.md)."""

from __future__ import annotations

from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.relevance import Judge, Judgement, quote_correct, visible
from glassrag.schema import Chunk


def chunk(doc: str, text: str, position: int, locator: str = "p. 1") -> Chunk:
    return Chunk.make(doc, locator, text, 0, len(text), position)


CHUNKS = [chunk("hr", "Annual leave is 25 days.  Book it two weeks ahead.", 0),
          chunk("hr", "Sick leave needs a note after three days.", 1, "p. 2"),
          chunk("kit", "The TX-200 weighs 5.2 kg with battery.", 0)]


def texted(*texts: str) -> Question:
    return Question("q", "?", True, answers=tuple(Span("hr", text=t) for t in texts))


def worded(*words: str, locator: str = "") -> Question:
    return Question("q", "?", True, answers=(Span("hr", locator=locator),), must_contain=words)


def test_a_text_label_matches_with_white_space_normalised():
    j = Judge(CHUNKS).judge(texted("25 days. Book   it"))
    assert j.relevant_chunks() == {CHUNKS[0].id} and j.intact
    assert j.texts == {"a0:hr": "25 days. Book it"}


def test_a_text_label_no_chunk_holds_whole_is_not_intact():
    j = Judge(CHUNKS).judge(texted("25 days. Sick leave"))
    assert j.relevant_chunks() == set() and not j.intact


def test_words_and_locator_labels():
    assert Judge(CHUNKS).judge(worded("LEAVE")).relevant_chunks() == {CHUNKS[0].id, CHUNKS[1].id}
    assert Judge(CHUNKS).judge(worded("leave", "note")).relevant_chunks() == {CHUNKS[1].id}
    assert Judge(CHUNKS).judge(worded("leave", locator="p. 1")).relevant_chunks() == {CHUNKS[0].id}


def test_the_judge_normalises_each_chunk_by_its_own_id():
    judge = Judge(CHUNKS)
    assert judge.norm(CHUNKS[0]) == "Annual leave is 25 days. Book it two weeks ahead."
    assert judge.norm(CHUNKS[1]) == "Sick leave needs a note after three days."


def test_ranked_units_skip_excluded_chunks_and_count_each_unit_once():
    j = Judgement({"a0:d": 1, "a1:d": 1}, {"a0:d": "d", "a1:d": "d"},
                  {"c1": ("a0:d",), "c2": ("a0:d", "a1:d"), "c3": ("a0:d",)}, {"a0:d": "", "a1:d": ""},
                  True, frozenset({"self"}))
    # the excluded chunk is dropped and the ranking goes on past it; c2 stands for the unit
    # c1 has not taken; c3's only unit is taken, so it counts as not relevant
    assert j.ranked_units(["self", "c1", "x", "c2", "c3"]) == ["a0:d", "~x", "a1:d", "~c3"]
    assert j.ranked_units(["c3", "c1"]) == ["a0:d", "~c1"]


def test_visible_needs_an_answer_text_whole_in_one_shown_text():
    q = texted("25 days.")
    j = Judge(CHUNKS).judge(q)
    assert visible(j, q, ["annual LEAVE is 25   days. book"])
    assert not visible(j, q, ["Annual leave is 25", "days."])
    assert not visible(j, q, [])


def test_visible_by_words_needs_every_word_in_one_shown_text():
    q = worded("Sick", "NOTE")
    j = Judge(CHUNKS).judge(q)
    assert visible(j, q, ["nothing here", "sick leave needs a note"])
    assert not visible(j, q, ["sick leave", "a note"])
    assert not visible(j, q, ["nothing here"])


def test_visible_is_unknown_without_text_or_words():
    q = Question("q", "?", True, answers=(Span("hr"),))
    assert visible(Judge(CHUNKS).judge(q), q, ["anything"]) is None


def test_a_quote_is_correct_inside_or_around_an_answer_text():
    q = texted("Annual leave is 25 days.")
    j = Judge(CHUNKS).judge(q)
    assert quote_correct(j, q, "annual leave is 25 DAYS.")  # the same, case aside
    assert quote_correct(j, q, "is 25 days")  # inside the answer
    assert quote_correct(j, q, "We say: Annual leave is 25 days. Book early.")  # holds it whole
    assert not quote_correct(j, q, "Book it two weeks ahead.")
    assert not quote_correct(j, q, "   ")


def test_a_quote_by_words_holds_every_word():
    q = worded("sick", "Three")
    j = Judge(CHUNKS).judge(q)
    assert quote_correct(j, q, "Sick leave needs a note after THREE days.")
    assert not quote_correct(j, q, "Sick leave needs a note.")


def test_a_quote_without_labels_is_not_correct():
    q = Question("q", "?", True, answers=(Span("hr"),))
    assert not quote_correct(Judge(CHUNKS).judge(q), q, "Annual leave is 25 days.")


def test_a_label_for_a_document_not_in_the_index_matches_nothing():
    q = Question("q", "?", True, answers=(Span("gone", text="25 days"), Span("gone2")))
    j = Judge(CHUNKS).judge(q)
    assert j.relevant_chunks() == set() and not j.intact
    assert j.unit_docs == {"a0:gone": "gone", "a1:gone2": "gone2"}


def test_only_a_question_marked_exclude_self_drops_its_own_document():
    """BEIR queries that are themselves documents (ArguAna) must not find themselves; a
    question whose id merely equals a document id keeps that document."""
    plain = Question("hr", "?", True, answers=(Span("kit", text="5.2 kg"),))
    assert Judge(CHUNKS).judge(plain).excluded == frozenset()
    marked = Question("hr", "?", True, answers=(Span("kit", text="5.2 kg"),), extra={"exclude_self": True})
    assert Judge(CHUNKS).judge(marked).excluded == {CHUNKS[0].id, CHUNKS[1].id}
    assert Judge(CHUNKS).judge(Question("nowhere", "?", True, extra={"exclude_self": True})).excluded == frozenset()
