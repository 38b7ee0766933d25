from glassrag.lexical.analyze import Analyzer
from glassrag.pipeline import Pipeline
from glassrag.present import also_found_order
from glassrag.present.excerpt import best_sentence, coverage, window
from glassrag.present.highlight import answer_words, asks_for_a_name
from glassrag.read.budget import Budget
from glassrag.read.extractive import ExtractiveReader
from glassrag.query import Query
from glassrag.schema import Hit

A = Analyzer()


def test_coverage_and_best_sentence():
    terms = set(A("tilt sensor calibration"))
    text = "The battery is low. The tilt sensor lost calibration. Nothing else."
    a, b, cov = best_sentence(text, terms, A)
    assert text[a:b] == "The tilt sensor lost calibration."
    assert cov == 1.0
    assert coverage(terms, A("tilt only")) == 1 / 3


def test_window_opens_at_the_sentence_and_stays_within_width():
    text = ("Intro sentence here. " * 30) + "The answer is here. " + ("Tail words. " * 30)
    anchor = text.index("The answer")
    start, end = window(text, anchor, width=120)
    assert start == anchor and end - start <= 120
    assert text[start:end].startswith("The answer is here.")
    assert window("short text", 3, width=720) == (0, 10)
    near_end = len(text) - 20
    s, e = window(text, near_end, width=120)
    assert e == len(text) and e - s <= 120 and s <= near_end


def test_highlight_marks_answer_words_not_question_words():
    terms = set(A("What does E-4107 mean?"))
    text = "E-4107 means the tilt sensor lost calibration."
    spans = answer_words(text, 0, len(text), terms, A)
    assert [text[a:b] for a, b in spans] == ["tilt sensor lost calibration"]


def test_highlight_skips_section_numbers_and_keeps_quantities():
    """Issue 27: the bold marked a section number ("5.3") and most words of the sentence
    instead of the answer ("about 4 minutes")."""
    question = "How long does the battery take to warm up?"
    terms = set(A(question))
    text = "5.3 Battery warm-up\nThe battery needs about 4 minutes of warm-up in cold weather."
    spans = answer_words(text, 0, len(text), terms, A, question)
    assert [text[a:b] for a, b in spans] == ["4 minutes"]
    every = answer_words(text, 0, len(text), terms, A)
    assert "5.3" not in [text[a:b] for a, b in every] and "4 minutes" in " ".join(text[a:b] for a, b in every)
    text = "The probation period is six months."  # no digits: every content word as before
    assert answer_words(text, 0, len(text), set(A("How long is probation?")), A, "How long is probation?")


def test_no_highlight_when_asking_for_a_name():
    assert asks_for_a_name("What is the overnight update window called?")
    assert asks_for_a_name("What's the name for the loan instrument?")
    assert asks_for_a_name("What do we call the weekday in the office?")
    assert not asks_for_a_name("What does E-4107 mean?")


def test_also_found_puts_one_passage_of_each_further_document_first():
    items = [("a", 2), ("a", 3), ("b", 4), ("c", 5), ("b", 6)]
    assert also_found_order(items, lambda i: i[0], first_doc="a") == [
        ("b", 4), ("c", 5), ("a", 2), ("a", 3), ("b", 6)]


def test_answer_shows_excerpt_and_highlights(index):
    answer = Pipeline(index).run("What does E-4107 mean?")
    p = answer.passage
    assert p.excerpt == p.text[p.excerpt_start:p.excerpt_start + len(p.excerpt)]
    marked = [p.excerpt[a:b] for a, b in p.highlights]
    assert marked == ["tilt sensor lost calibration"]


def test_budget_packs_whole_chunks_in_order():
    lengths = {"a": 50, "b": 80, "c": 30}
    hits = [Hit(c, 1.0, i + 1, "in") for i, c in enumerate(["a", "b", "c"])]
    packed, notes = Budget(100, lengths.__getitem__).apply(Query("q", ["q"]), hits)
    assert [h.chunk_id for h in packed] == ["a", "c"]
    assert notes == ["80 of 100 words used by 2 chunk(s)", "1 chunk(s) did not fit"]


def test_reader_quotes_the_best_sentence_or_says_not_found():
    reader = ExtractiveReader(A, threshold=0.5)
    terms = set(A("tilt sensor calibration"))
    quote = reader.read(terms, [("c1", "Battery low. Nothing here."),
                                ("c2", "First line. The tilt sensor lost calibration.")])
    assert quote.found and quote.chunk_id == "c2" and quote.text == "The tilt sensor lost calibration."
    low = ExtractiveReader(A, threshold=0.9).read(set(A("tilt quantum zebra")), [("c2", "The tilt sensor.")])
    assert not low.found and "below the threshold" in low.why


def test_budget_smaller_than_a_chunk_is_refused(index):
    import pytest
    from glassrag.errors import ConfigError

    with pytest.raises(ConfigError, match="holds no whole chunk"):
        Pipeline(index, index.config.with_overrides(answer={"budget_words": 50}))


# ---------------------------------------------------------- the run that answers (issue 27, item 8)

def _marked(question: str, text: str) -> list[str]:
    return [text[a:b] for a, b in answer_words(text, 0, len(text), set(A(question)), A, question)]


def test_one_run_is_marked_not_every_word_the_question_lacks():
    text = "A travel request is approved by the line manager, and copied to finance for the records."
    # the old rule marked "line manager", "copied", "finance" and "records"
    assert _marked("Who approves a travel request?", text) == ["line manager"]


def test_the_run_after_the_question_s_words_wins_a_tie_of_distance():
    # "prism lock lost" and "hold still" are both one word from a question word; given before new
    text = "| E-3301 | Prism lock lost | Hold still |"
    assert _marked("What does E-3301 mean?", text) == ["Prism lock lost"]
    assert _marked("What does the cable do?", "Spare cable gets hot.") == ["gets hot"]


def test_the_unit_with_most_question_words_wins_over_a_nearer_run_elsewhere():
    text = "The fan hums. The scanner mirror motor stops when it overheats above 60 degrees."
    assert _marked("Why does the scanner mirror motor stop?", text) == ["when it overheats above 60 degrees"]


def test_a_question_for_a_figure_marks_a_number_not_an_identifier():
    record = "Part number: 770-0011\nItem: Aluminium tripod, lightweight\nPrice (EUR): 310"
    assert _marked("How much is the lightweight aluminium tripod?", record) == ["310"]
    assert _marked("What does the tripod cost?", record) == ["310"]
    # a question that does not ask for a figure: the nearest new words, after the question's
    assert _marked("Which item is the aluminium tripod?", record) == ["lightweight"]


def test_a_clause_ends_a_run_and_at_most_six_words_are_marked():
    text = "The kit holds a spare battery, a charger, a strap, and a case."
    assert _marked("What does the kit hold?", text) == ["spare battery"]
    long = "The kit holds spare battery charger strap case lens cap tripod screw."
    marked = _marked("What does the kit hold?", long)
    assert marked == ["spare battery charger strap case lens"] and len(marked[0].split()) == 6


def test_nothing_new_marks_nothing():
    assert _marked("tilt sensor calibration", "Tilt sensor calibration.") == []


def test_neighbours_show_the_document_around_a_passage_cited_where_the_window_opens(index):
    """answer.neighbours: the passage is its document's text from the chunk before to the chunk
    after; the window lands on the best sentence even in a neighbour, and the citation is that
    neighbour's section, while the passage stays the chunk that was ranked."""
    from glassrag.present.answer import Select

    sensor = next(c for c in index.chunks if c.locator == "§ 2.1 Sensor errors")
    power = next(c for c in index.chunks if c.locator == "§ 2.2 Power errors")
    question = "Which code says the battery is below ten percent?"
    terms = set(A(question))
    shown = Select(index, 5, 60, neighbours=1).passage(Hit(sensor.id, 1.0, 1, "x"), 1, terms, question)
    doc = index.documents[sensor.doc_id]
    around = index.around(sensor.id, 1)
    assert [c.position for c in around] == [2, 3, 4]
    assert shown.text == doc.text[around[0].start:around[-1].end]
    assert shown.excerpt == shown.text[shown.excerpt_start:shown.excerpt_start + len(shown.excerpt)]
    assert "battery is below ten percent" in shown.excerpt
    assert shown.locator == power.locator and shown.chunk_id == sensor.id
    alone = Select(index, 5, 60).passage(Hit(sensor.id, 1.0, 1, "x"), 1, terms, question)
    assert alone.text == sensor.text and alone.locator == sensor.locator
    assert "battery" not in alone.excerpt
    assert Select(index, 5, 60, neighbours=1).params() == {"k": 5, "neighbours": 1}
    assert Select(index, 5, 60).params() == {"k": 5}
