"""The scores of a generated answer, on hand-made answers whose counts are known."""

from glassrag.evaluate.grade import citations, grade, judge_citation, leaked, refusal, wording_share
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
