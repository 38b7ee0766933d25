"""The scores of a generated answer, on hand-made answers whose counts are known."""

from glassrag.evaluate.grade import (bigrams, citations, contains_answer, grade, judge_citation, leaked, refusal,
                                      wording_share)
from glassrag.generate.prompt import Given, given, label, messages
from glassrag.lexical.analyze import Analyzer
from glassrag.schema import Chunk

WARRANTY = Given("c1", "warranty", "Warranty", "Warranty, § 2 Coverage", ("§ 2 Coverage", "§ 3 Claims"),
                 "The TX-200 is covered for 24 months from delivery. Batteries are covered for 12 months.", 1)
RETURNS = Given("c2", "returns", "Returns policy 2025", "Returns policy 2025, § Refunds", ("§ Refunds",),
                "Unused items can be returned within 30 days for a full refund.")
GIVEN = [WARRANTY, RETURNS]
TITLES = ["Warranty", "Returns policy 2025", "Returns policy 2023", "Price list"]
NUMBERED = [Given("c1", "warranty", "Warranty", "Document 1", ("§ 2 Coverage",), WARRANTY.text),
            Given("c2", "returns", "Returns policy 2025", "Document 2", ("§ Refunds",), RETURNS.text)]
analyze = Analyzer()


def test_citations_are_the_bracketed_spans():
    assert citations("24 months [Warranty, § 2 Coverage] (see also [Document 3]) ok") == [
        "Warranty, § 2 Coverage", "Document 3"]
    assert citations("a (b) [c] d") == ["b", "c"]
    assert leaked("see also ([Document 3])") == ["[Document 3]"]


def test_a_citation_of_a_passage_given_by_label_title_or_neighbour_locator():
    assert judge_citation("Warranty, § 2 Coverage", GIVEN, TITLES) == "given"
    assert judge_citation("warranty", GIVEN, TITLES) == "given"  # the document, no locator
    assert judge_citation("Warranty, § 3 Claims", GIVEN, TITLES) == "given"  # an attached neighbour
    assert judge_citation("Returns policy 2025, § Refunds", GIVEN, TITLES) == "given"


def test_foreign_citations():
    # a locator of a given document that was not given
    assert judge_citation("Warranty, § 7 Exclusions", GIVEN, TITLES) == "foreign"
    # a document of the index that was not given
    assert judge_citation("Returns policy 2023", GIVEN, TITLES) == "foreign"
    assert judge_citation("Price list, sheet Accessories", GIVEN, TITLES) == "foreign"
    # an invented source with a locator
    assert judge_citation("User Manual, page 12", GIVEN, TITLES) == "foreign"
    # a numbered label beyond those given, with numbered labels and with titles
    assert judge_citation("Document 3", NUMBERED, TITLES) == "foreign"
    assert judge_citation("Document 2", NUMBERED, TITLES) == "given"
    assert judge_citation("Document 2", GIVEN, TITLES) == "foreign"


def test_brackets_that_name_nothing_are_not_citations():
    assert judge_citation("12 V", GIVEN, TITLES) == "none"
    assert judge_citation("2", GIVEN, TITLES) == "none"
    assert judge_citation("about 4 minutes", GIVEN, TITLES) == "none"


def test_leaked_tags_are_numbered_labels_template_tokens_and_scaffolding():
    assert leaked("Covered for 24 months [Warranty, § 2 Coverage].") == []
    assert leaked("Covered for 24 months [Document 1].") == ["[Document 1]"]
    assert leaked("Covered for 24 months [1][2].") == ["[1]", "[2]"]
    assert leaked("As Passage 2 says, 30 days.") == ["Passage 2"]
    assert leaked("30 days.<|im_end|>") == ["<|im_end|>"]
    assert leaked("Question: how long?\n30 days.") == ["Question:"]


def test_refusal_in_the_stated_form_hedged_or_answered():
    assert refusal("Not in the documents.") == "refused"
    assert refusal("not in the documents") == "refused"
    assert refusal("I don't know which laser it uses.") == "hedged"
    assert refusal("The passages do not mention a wavelength.") == "hedged"
    assert refusal("It is covered for 24 months.") == "answered"


def test_wording_share_counts_content_bigrams_found_in_the_passages():
    # content tokens: tx-200 / tx / 200 are kept whole and in parts by the analyzer, so count by hand
    tokens = analyze("covered for 24 months")  # → cover, 24, month: bigrams (cover 24) (24 month)
    assert tokens == ["cover", "24", "month"]
    assert wording_share("Covered for 24 months.", GIVEN, analyze) == 1.0
    # (cover 24) and (24 month) are in the text, (month purple) and (purple elephant) are not
    assert wording_share("Covered for 24 months, purple elephants.", GIVEN, analyze) == 2 / 4
    # citations are removed before counting
    assert wording_share("Covered for 24 months [Warranty, § 2 Coverage].", GIVEN, analyze) == 1.0
    assert wording_share("the of and", GIVEN, analyze) is None


def test_grade_one_answer_every_score():
    g = grade("Covered for 24 months [Warranty, § 2 Coverage] [Document 4].", GIVEN, TITLES, analyze,
              answerable=True, must_contain=["24 months"])
    assert g["foreign_citations"] == 1.0 and g["found"]["foreign"] == ["Document 4"]
    assert g["leaked_tags"] == 1.0 and g["found"]["tags"] == ["[Document 4]"]
    assert g["cited"] == 1.0
    assert g["refused_answerable"] == 0.0 and "refused_unanswerable" not in g
    assert g["contains_answer"] == 1.0
    assert g["wording_share"] == 1.0
    r = grade("Not in the documents.", GIVEN, TITLES, analyze, answerable=False)
    assert r["refused_unanswerable"] == 1.0 and r["wording_share"] is None and r["cited"] == 0.0
    assert "contains_answer" not in r
    m = grade("About 30 days.", GIVEN, TITLES, analyze, answerable=True, must_contain=["24 months"])
    assert m["contains_answer"] == 0.0 and m["cited"] == 0.0 and m["foreign_citations"] == 0.0


def test_labels_and_context_expansion():
    assert label("Warranty", "§ 2 Coverage", 3, "title") == "Warranty, § 2 Coverage"
    assert label("Warranty", "§ 2 Coverage", 3, "numbered") == "Document 3"
    a = Chunk.make("w", "§ 1 Scope", "Scope text.", 0, 11, 0)
    b = Chunk.make("w", "§ 2 Coverage", "Coverage text.", 12, 26, 1)
    c = Chunk.make("w", "§ 3 Claims", "Claims text.", 27, 39, 2)
    places = {(x.doc_id, x.position): x for x in (a, b, c)}
    out = given([b], {"w": "Warranty"}, places, "title", 1)
    assert out[0].text == "Scope text.\nCoverage text.\nClaims text."
    assert out[0].locators == ("§ 2 Coverage", "§ 1 Scope", "§ 3 Claims") and out[0].neighbours == 2
    # a neighbour that is itself a passage given is not repeated
    both = given([b, c], {"w": "Warranty"}, places, "title", 1)
    assert both[0].text == "Scope text.\nCoverage text." and both[1].text == "Claims text."
    plain = given([b], {"w": "Warranty"}, places, "numbered", 0)
    assert plain[0].text == "Coverage text." and plain[0].label == "Document 1"
    sent = messages("How long?", plain)
    assert "[Document 1]\nCoverage text." in sent[1]["content"] and "Not in the documents." in sent[0]["content"]



def test_a_citation_is_at_most_200_characters_inside_one_pair_of_brackets():
    assert citations("[" + "a" * 200 + "] (" + "b" * 200 + ")") == ["a" * 200, "b" * 200]
    assert citations("[" + "a" * 201 + "] (" + "b" * 201 + ")") == []
    assert citations("[] () [a(b]c)") == []  # empty, or a bracket of the other kind inside


# the rules one by one (each test below fails if its rule is turned around) ----------------

PASSAGES = [Given("c1", "warranty", "Warranty", "Passage 1", ("§ 2 Coverage",), WARRANTY.text),
            Given("c2", "returns", "Returns policy 2025", "Passage 2", ("§ Refunds",), RETURNS.text)]


def test_a_bare_number_names_a_passage_only_when_the_labels_are_numbered():
    # labels "Document N" or "Passage N": a number from 1 to len(given) = 2 is a passage given
    for numbered in (NUMBERED, PASSAGES):
        assert [judge_citation(n, numbered, TITLES) for n in ("0", "1", "2", "3")] == [
            "foreign", "given", "given", "foreign"]
    assert judge_citation("Passage 1", PASSAGES, TITLES) == "given"
    assert judge_citation("Passage 3", PASSAGES, TITLES) == "foreign"
    # the prefixes NUMBERED allows, a '#', and lists or ranges (the first number decides)
    for span in ("doc. 2", "Source #2", "context 2", "ref 2", "reference 2", "2, 3", "2; 3", "2–3", "2-3"):
        assert judge_citation(span, NUMBERED, TITLES) == "given", span
    assert judge_citation("Document 1, 5", NUMBERED, TITLES) == "given"
    assert judge_citation("3, 1", NUMBERED, TITLES) == "foreign"
    # with title labels a bare number names nothing, a number with a word names a label not given
    assert judge_citation("1", GIVEN, TITLES) == "none"
    assert judge_citation("1, 2", GIVEN, TITLES) == "none"
    assert judge_citation("Doc 1", GIVEN, TITLES) == "foreign"
    # not NUMBERED: a word after the number, or a word that is not a label's
    assert judge_citation("Chapter 2", NUMBERED, TITLES) == "none"
    assert judge_citation("2 V", NUMBERED, TITLES) == "none"


def test_a_title_with_a_locator_must_match_one_of_the_passage_locators():
    # what is left after the title (", § 2" → "§ 2", stripped of " ,;:-–—") is inside the
    # locator "§ 2 Coverage": given; a locator that only starts like one given is not
    assert judge_citation("Warranty, § 2", GIVEN, TITLES) == "given"
    assert judge_citation("Warranty — § 3 Claims", GIVEN, TITLES) == "given"
    assert judge_citation("Warranty: § 2 Coverage and exclusions", GIVEN, TITLES) == "given"  # a locator given inside
    assert judge_citation("Warranty, § 23", GIVEN, TITLES) == "foreign"
    # words after the title that hold no locator: the document given is what is named
    assert judge_citation("Warranty, terms", GIVEN, TITLES) == "given"
    assert judge_citation("see Warranty", GIVEN, TITLES) == "given"
    # two documents given named at once: each title is removed, their locators pooled
    assert judge_citation("Warranty; Returns policy 2025, § Refunds", GIVEN, TITLES) == "given"
    assert judge_citation("Warranty; Returns policy 2025, page 9", GIVEN, TITLES) == "foreign"


def test_locators_of_every_kind_make_an_unknown_title_a_citation():
    for locator in ("page 12", "p. 12", "pp. 3-4", "slide 2", "sheet Prices", "line 4", "lines 4-9", "§ 4", "§4"):
        assert judge_citation(f"User Manual, {locator}", GIVEN, TITLES) == "foreign", locator
    # a locator alone, or beside fewer than three letters, names no document
    assert judge_citation("page 12", GIVEN, TITLES) == "none"
    assert judge_citation("ab, page 12", GIVEN, TITLES) == "none"
    assert judge_citation("abc, page 12", GIVEN, TITLES) == "foreign"
    # a title of the index not given is foreign even without a locator; an empty title is no title
    assert judge_citation("the price list", GIVEN, TITLES) == "foreign"
    assert judge_citation("nothing known", GIVEN, ["", "Price list"]) == "none"


def test_a_label_given_in_full_is_given():
    assert judge_citation("  returns POLICY 2025,  § refunds ", GIVEN, TITLES) == "given"  # spaces and case
    assert judge_citation("Passage 2", PASSAGES, []) == "given"


def test_leaked_tags_in_parentheses_after_brackets_and_at_a_line_start():
    assert leaked("30 days (Document 2).") == ["(Document 2)"]
    assert leaked("30 days (2).") == ["(2)"]
    assert leaked("30 days (12 V).") == []
    # a bare label is found after a bracket too: the bracket is cut out as a space
    assert leaked("30 days [Returns policy 2025]Passage 2 says so.") == ["Passage 2"]
    assert leaked("See document #2 and source 1; a context of 3 days.") == ["document #2", "source 1"]
    assert leaked("<s>30 days.</s>") == ["<s>", "</s>"]
    assert leaked("<|im_start|>assistant\n30 days.") == ["<|im_start|>"]
    assert leaked("30 days.\n  Answer: 30 days.\nUser : thanks") == ["Answer:", "User :"]
    assert leaked("The answer: 30 days.") == []  # scaffolding only at the start of a line
    # bracketed labels, then bare ones, then template tokens and scaffolding in the order of the text
    assert leaked("Context: Passage 1 [2] <|end|>") == ["[2]", "Passage 1", "Context:", "<|end|>"]


def test_a_date_or_a_range_in_brackets_is_no_label():
    """Issue 27: "(2025-02-11)" and "(3-5)" counted as leaked tags and foreign citations."""
    assert leaked("Updated on (2025-02-11).") == []
    assert leaked("It takes (3-5) days.") == []
    assert leaked("It takes (3 - 5) days.") == []
    assert leaked("See [3-5] and (Document 3-5).") == ["[3-5]", "(Document 3-5)"]
    assert citations("Since (2025-02-11), it takes (3-5) days [2].") == ["2025-02-11", "2"]
    assert judge_citation("2025-02-11", PASSAGES, []) == "none"
    assert judge_citation("3-5", PASSAGES, []) == "foreign"  # [3-5] of two passages
    got = grade("Since (2025-02-11) it takes (3-5) days.", PASSAGES, [], lambda t: t.split())
    assert got["leaked_tags"] == 0.0 and got["foreign_citations"] == 0.0


def test_refusal_hedges_one_by_one():
    assert refusal("The answer is: Not in the documents. Sorry.") == "refused"  # the form inside
    assert refusal("NOT IN THE  DOCUMENTS") == "refused"
    assert refusal("Not in the document.") == "answered"  # not the stated form, and no hedge
    for hedge in ("I do not know.", "I don't know.", "I cannot find it.", "We cannot answer that.",
                  "I cannot determine it.", "I can't find it.", "I can't answer.", "There is no information.",
                  "It is not mentioned.", "Not provided.", "Not specified.", "Not stated.", "Not included.",
                  "Not available.", "The text does not contain it.", "They do not mention it.",
                  "It does not say.", "It does not provide one.", "It does not specify.",
                  "It does not include one.", "I am unable to find it.", "Unable to answer."):
        assert refusal(hedge) == "hedged", hedge
    assert refusal("Unknowingly covered for 24 months.") == "answered"


def test_bigrams_of_two_or_more_tokens_and_single_tokens_alone():
    assert bigrams([]) == set()
    assert bigrams(["a"]) == {("a",)}
    assert bigrams(["a", "b"]) == {("a", "b")}
    assert bigrams(["a", "b", "c", "a", "b"]) == {("a", "b"), ("b", "c"), ("c", "a")}


def test_wording_share_of_a_one_word_answer_and_across_passages():
    # one content word: its unigram is compared with the passages' words
    assert wording_share("Covered.", GIVEN, analyze) == 1.0
    assert wording_share("Purple.", GIVEN, analyze) == 0.0
    # the passages are joined by a line break, so the last word of one and the first of the next
    # make a bigram: 12 months | Unused items → (12 month) (month unus) (unus item), all found
    assert analyze("12 months, unused items.") == ["12", "month", "unus", "item"]
    assert wording_share("12 months, unused items.", GIVEN, analyze) == 1.0
    # one of three found: (cover 30) no, (30 day) yes, (day purpl) no
    assert wording_share("Covered 30 days purple.", GIVEN, analyze) == 1 / 3


def test_contains_answer_every_string_in_any_case_and_spacing():
    assert contains_answer("Covered for 24  MONTHS.", ["24 months", "covered"]) is True
    assert contains_answer("Covered for 24 months.", ["24 months", "12 months"]) is False
    assert contains_answer("Covered for 24 months.", []) is None


def test_grade_the_whole_record_of_an_answer():
    text = "Covered for 24 months [Warranty, § 2 Coverage] [Price list] (12 V)."
    assert grade(text, GIVEN, TITLES, analyze) == {
        "foreign_citations": 1.0, "leaked_tags": 0.0, "cited": 1.0, "hedged": 0.0,
        "wording_share": 1.0,  # (cover 24) (24 month); "12 V" is cut out as a bracket
        "refusal": "answered",
        "found": {"foreign": ["Price list"], "tags": [], "citations": ["Warranty, § 2 Coverage", "Price list"]}}
    hedged = grade("The passages do not mention it [Document 4].", NUMBERED, TITLES, analyze, answerable=True)
    assert hedged == {
        "foreign_citations": 1.0, "leaked_tags": 1.0, "cited": 0.0, "hedged": 1.0, "wording_share": None,
        "refusal": "hedged", "refused_answerable": 0.0, "contains_answer": None,
        "found": {"foreign": ["Document 4"], "tags": ["[Document 4]"], "citations": ["Document 4"]}}
    refused = grade("Not in the documents.", GIVEN, TITLES, analyze, answerable=True, must_contain=["24 months"])
    assert refused["refused_answerable"] == 1.0 and refused["contains_answer"] == 0.0
    assert refused["hedged"] == 0.0 and refused["refusal"] == "refused" and refused["wording_share"] is None
    answered = grade("24 months.", GIVEN, TITLES, analyze, answerable=False)
    assert answered["refused_unanswerable"] == 0.0 and "refused_answerable" not in answered
    assert "contains_answer" not in answered
