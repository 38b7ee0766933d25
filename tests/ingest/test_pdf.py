"""PDF loader: real PDFs made with fpdf2, read back with pypdfium2."""

from pathlib import Path

import pytest

from glassrag.ingest import load_document
from glassrag.ingest.hyphens import Vocabulary
from glassrag.ingest.pdf import Line, drop_running_heads, load_pdf, page_locators, pdf_date, reflow
from tests.ingest.build_files import pdf_bytes

LONG = ("Before you start working alone, call or message the duty coordinator with your name, "
        "the site address, the nearest access point for an ambulance, your planned finishing "
        "time and the mobile number you will carry.")


def sections(extracted):
    return {s.locator: extracted.text[s.start:s.end] for s in extracted.sections}


def test_known_sentence_comes_back_with_its_page():
    data = pdf_bytes([["Field Safety Procedures", "Scope of these procedures."],
                      ["Lone working",
                       "Work may resume 30 minutes after the last thunder was heard."],
                      ["Incidents", "Report every near miss within 24 hours."]],
                     title="Field Safety Procedures")
    ex = load_pdf(Path("safety.pdf"), data)
    assert ex.title == "Field Safety Procedures"
    assert ex.format == "pdf"
    found = sections(ex)
    assert list(found) == ["page 1", "page 2", "page 3"]
    assert "Work may resume 30 minutes after the last thunder was heard." in found["page 2"]
    assert "\r" not in ex.text
    assert ex.metadata["pages"] == 3 and ex.metadata["empty_pages"] == []
    assert ex.metadata["date"] == "2025-03-14"


def test_repeated_header_and_footer_are_dropped():
    topics = ["tripods", "batteries", "lasers", "weather"]
    pages = [[f"{n}. {topic.title()}", *[f"What to know about {topic}, part {k}."
                                          for k in range(1, n + 1)], f"See also section {n + 4}."]
             for n, topic in enumerate(topics, 1)]
    data = pdf_bytes(pages, header="Fennick Geosystems - Confidential",
                     footer="Page {page} of {pages}")
    ex = load_pdf(Path("h.pdf"), data)
    assert "Confidential" not in ex.text
    assert "Page" not in ex.text
    assert sections(ex)["page 3"] == (
        "3. Lasers\nWhat to know about lasers, part 1.\nWhat to know about lasers, part 2.\n"
        "What to know about lasers, part 3.\nSee also section 7.")


def test_a_line_on_one_page_only_is_not_a_header():
    pages = [["Unique opening line.", "Body one."], ["Body two."], ["Body three."]]
    ex = load_pdf(Path("u.pdf"), pdf_bytes(pages, footer="Page {page}"))
    assert ex.text.startswith("Unique opening line.")
    assert "Page" not in ex.text


def test_page_labels_give_the_locators():
    pages = [["Preface text."], ["Contents."], ["Chapter one: the TX-200 is levelled first."],
             ["Chapter two."]]
    data = pdf_bytes(pages, labels={0: ("r", "", 1), 2: ("D", "", 1)})
    ex = load_pdf(Path("labels.pdf"), data)
    assert list(sections(ex)) == ["page i", "page ii", "page 1", "page 2"]
    assert "the TX-200 is levelled first" in sections(ex)["page 1"]


def test_duplicate_labels_fall_back_to_page_numbers():
    assert page_locators(["i", "1", "1", ""]) == ["page i", "page 2", "page 3", "page 4"]


def test_title_from_the_first_heading_like_line_without_metadata():
    ex = load_pdf(Path("t.pdf"), pdf_bytes([["Travel Policy 2025", "Staff travelling abroad."]]))
    assert ex.title == "Travel Policy 2025"
    ex = load_pdf(Path("fallback.pdf"), pdf_bytes([["A sentence that ends with a period."]]))
    assert ex.title == "fallback"


def test_wrapped_paragraph_is_one_line_again_and_list_items_stay_apart():
    data = pdf_bytes([["Check-in procedure", LONG, "- in tunnels and shafts",
                       "- within 3 m of a live railway line"]])
    ex = load_pdf(Path("w.pdf"), data)
    assert ex.text.split("\n") == ["Check-in procedure", LONG, "- in tunnels and shafts",
                                   "- within 3 m of a live railway line"]


def test_page_with_an_image_and_no_text_is_recorded_and_warned_about():
    data = pdf_bytes([["Page one has text."], [], ["Page three has text."]], scans=[1])
    doc, warnings = load_document(Path("scan.pdf"), "scan", data)
    assert doc.metadata["empty_pages"] == [2]
    assert doc.metadata["blank_pages"] == []
    assert [s.locator for s in doc.sections] == ["page 1", "page 3"]
    assert warnings == ("extraction quality warn: 1 of 3 page(s) have no text (page 2): if they "
                        "are scanned images, they need OCR before their content can be searched",)


def test_page_with_neither_text_nor_image_is_blank_not_a_scan():
    data = pdf_bytes([["Page one has text."], [], ["Page three has text."]])
    doc, warnings = load_document(Path("blank.pdf"), "blank", data)
    assert doc.metadata["empty_pages"] == []
    assert doc.metadata["blank_pages"] == [2]
    assert [s.locator for s in doc.sections] == ["page 1", "page 3"]
    assert warnings == ()


def test_reflow_joins_only_lines_whose_next_word_would_not_fit():
    # right edge 500; a space is 3 wide: 440 + 3 + 60 > 500 wraps, 400 + 3 + 60 does not
    lines = [Line("a line that ran to the margin and", 500, 20, 3),
             Line("went on here, then", 440, 30, 3),
             Line("continued here.", 400, 60, 3),
             Line("Next paragraph starts", 300, 60, 3),
             Line("- an item", 200, 5, 3)]
    assert reflow(lines) == ["a line that ran to the margin and went on here, then continued here.",
                             "Next paragraph starts", "- an item"]


def test_reflow_decides_line_end_hyphens_by_the_documents_own_words():
    lines = [Line("wear a class 3 high-", 500, 30, 3), Line("visibility jacket", 200, 60, 3),
             Line("informa\x02", 500, 30, 3), Line("tion desk", 100, 60, 3)]
    elsewhere = Vocabulary(["a high fence", "poor visibility", "the information desk"])
    assert reflow(lines, vocabulary=elsewhere) == ["wear a class 3 high-visibility jacket",
                                                   "information desk"]
    # with no other evidence, "high" and "visibility" are only halves of a break: joined
    assert reflow(lines) == ["wear a class 3 highvisibility jacket", "information desk"]


def test_running_heads_need_more_than_half_of_at_least_three_pages():
    def page(*texts):
        return [Line(t) for t in texts]

    two = [page("ACME", "body a"), page("ACME", "body b")]
    assert drop_running_heads(two) == two
    pages = [page("ACME", "body a", "3 of 4"), page("ACME", "body b", "4 of 4"),
             page("Other", "body c", "5 of 4", "ACME")]
    assert [[ln.text for ln in p] for p in drop_running_heads(pages)] == [
        ["body a"], ["body b"], ["Other", "body c", "ACME"]]  # a header is not a footer


@pytest.mark.parametrize("value, date", [("D:20240916093000+01'00'", "2024-09-16"),
                                         ("D:2024", "2024-01-01"), ("", ""), ("yesterday", "")])
def test_pdf_dates(value, date):
    assert pdf_date(value) == date


def test_reflow_on_a_page_of_short_lines_uses_the_mirrored_left_margin():
    # the longest line ends at 250, short of 0.8 × (600 - 50): the edge is 550, nothing joins
    lines = [Line("What to know, part 1.", 250, 40, 3, left=50),
             Line("What to know, part 2.", 250, 40, 3, left=50)]
    assert reflow(lines, page_width=600) == ["What to know, part 1.", "What to know, part 2."]
    assert reflow(lines) == ["What to know, part 1. What to know, part 2."]  # edge 250


MATH = Path(__file__).resolve().parents[1] / "fixtures" / "math" / "binomial-cis-joss.pdf"


def test_letters_beyond_the_basic_plane_are_one_character_each_and_the_pdf_indexes(tmp_path):
    """pdfium gives 𝑝 (U+1D45D) as two UTF-16 halves; a lone half cannot be written as
    UTF-8 and stopped the whole ingest (tests/fixtures/math/PROVENANCE.md)."""
    ex = load_pdf(MATH, MATH.read_bytes())
    assert "probability of 7 success parameter, 𝑝, of a binomial" in ex.text
    assert not any(0xD800 <= ord(c) < 0xE000 for c in ex.text)
    assert "\ufffd" not in ex.text
    from glassrag.cli import main
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / MATH.name).write_bytes(MATH.read_bytes())
    assert main(["ingest", str(docs), "--index", str(tmp_path / "index")]) == 0
    from glassrag.store import EmbeddedStore
    index = EmbeddedStore(tmp_path / "index").read()
    assert any("𝑝" in c.text for c in index.chunks)
