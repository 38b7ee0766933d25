"""True document titles (issue 49, item 1): placeholders, page labels, running heads, section
names and a program's second `<title>` were taken for titles; each rule here has a case that
the code before it got wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.ingest.html import load_html
from glassrag.ingest.markdown import load_markdown
from glassrag.ingest.pdf import load_pdf
from glassrag.ingest.titles import agree, choose_title, is_junk, readable_stem, tidy


@pytest.mark.parametrize("title", ["DRAFT", "Page 1", "page 3 of 9", "p. 4", "- 2 -", "Introduction",
                                   "Overview", "Table of Contents", "SOFTWARE", "report", "Confidential",
                                   "____", "Executive Summary", "Appendix B"])
def test_placeholders_page_labels_and_section_names_are_no_titles(title: str):
    assert is_junk(tidy(title))


@pytest.mark.parametrize("title", ["Cloud Native Security Whitepaper", "Annual report 2024", "Page Rank",
                                   "Introduction to Kubernetes", "Bald eagle", "Drafting guide"])
def test_titles_that_merely_hold_such_words_stay(title: str):
    assert not is_junk(tidy(title))


def test_tidy_drops_rules_status_tags_and_underscored_labels():
    assert tidy("______________ Page 1") == "Page 1"
    assert tidy("___P_a_g_e__1") == "Page1" and is_junk(tidy("___P_a_g_e__1"))
    assert tidy("[draft] Cloud security guide") == "Cloud security guide"
    assert tidy("DRAFT: Cloud security guide") == "Cloud security guide"
    assert tidy("snake_case tools") == "snake_case tools"


def test_a_file_name_made_readable():
    assert readable_stem("fomc-minutes-2023-03-22") == "fomc minutes 2023-03-22"
    assert readable_stem("Bald_eagle") == "Bald eagle"
    assert readable_stem("Chico's_tyrannulet") == "Chico's tyrannulet"
    assert readable_stem("___") == "___"


def test_metadata_and_shown_text_agree_by_a_majority_of_either_ones_words():
    # the shown text is a part of the metadata title: the fuller metadata wins
    assert agree("Cloud Native Security Whitepaper", "CLOUD NATIVE")
    assert choose_title("Cloud Native Security Whitepaper", "CLOUD NATIVE", "", "c") == \
        "Cloud Native Security Whitepaper"
    # 2 of 4 and 2 of 6 words shared: a series' boilerplate against the report's own title
    assert not agree("Federal Reserve Board Publication", "2023 Federal Reserve Stress Test Results")
    assert choose_title("Federal Reserve Board Publication", "2023 Federal Reserve Stress Test Results",
                        "", "f") == "2023 Federal Reserve Stress Test Results"
    # a placeholder shown largest does not outvote a good metadata title
    assert choose_title("FOMC Minutes January 31–February 1, 2023", "_____________ Page 1", "", "f") == \
        "FOMC Minutes January 31–February 1, 2023"
    assert choose_title("Crux.jl: Deep Reinforcement Learning in Julia", "DRAFT", "", "c") == \
        "Crux.jl: Deep Reinforcement Learning in Julia"


def markdown_title(text: str, name: str = "guide-to-things.md") -> str:
    return load_markdown(Path(name), text.encode()).title


def test_markdown_titles():
    assert markdown_title("---\ntitle: From the front matter\n---\n# Heading one\n") == "From the front matter"
    assert markdown_title("Some text.\n\n# The first H1\n\n## Part\n") == "The first H1"
    # a section's name is no title; a heading on the first line of any level is one
    assert markdown_title("# Introduction\n\nText.\n") == "guide to things"
    assert markdown_title("## HMDA Filing FAQ\n\n### Accounts\n") == "HMDA Filing FAQ"
    assert markdown_title("##Institution Identifiers FAQ\n\n### Institution Identifiers\n") == \
        "Institution Identifiers FAQ"
    assert markdown_title("# [draft] Securing the cluster\n") == "Securing the cluster"
    assert markdown_title("Text only.\n", "cfpb-hmda-faq.md") == "cfpb hmda faq"


def test_html_title_is_the_first_title_unless_the_h1_says_more():
    page = ("<html><head><title>report</title></head><body><svg><title>Logo Portraitnew</title></svg>"
            "<h1>Premium Growth Model Annual Report: 2026</h1><p>Text.</p></body></html>")
    assert load_html(Path("p.html"), page.encode()).title == "Premium Growth Model Annual Report: 2026"
    page = "<html><head><title>Trio guide</title></head><body><svg><title>Logo</title></svg></body></html>"
    assert load_html(Path("p.html"), page.encode()).title == "Trio guide"


def pdf_with(pages: list[list[tuple[str, int]]]) -> bytes:
    """Pages of (text, font size) lines, no metadata title."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    for lines in pages:
        pdf.add_page()
        for text, size in lines:
            pdf.set_font("Helvetica", size=size)
            pdf.cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_a_pdf_watermark_or_running_head_set_large_is_no_title():
    body = [("A paragraph of the body that says what this page holds.", 10)]
    watermark = [[("DRAFT", 60), ("Sparse retrieval in practice", 18), *body]] + [[("DRAFT", 60), *body]] * 3
    assert load_pdf(Path("w.pdf"), pdf_with(watermark)).title == "Sparse retrieval in practice"
    head = [[("CLOUD NATIVE", 24), ("Securing the supply chain", 16), *body]] + [[("CLOUD NATIVE", 24), *body]] * 3
    assert load_pdf(Path("h.pdf"), pdf_with(head)).title == "Securing the supply chain"
    # a title repeated small in every page's header is still the title
    own = [[("Treasury's Exchange Fund", 18), *body]] + [[("Treasury's Exchange Fund", 9), *body]] * 3
    assert load_pdf(Path("t.pdf"), pdf_with(own)).title == "Treasury's Exchange Fund"
    # a page label first, then the title as the first line of an all-one-size page
    labelled = [[("Page 1", 10), ("Minutes of the Committee, March 2023", 10), *body]] + [[*body]] * 3
    assert load_pdf(Path("m.pdf"), pdf_with(labelled)).title == "Minutes of the Committee, March 2023"
