"""Heading-path locators, the locator of text before the first heading, running heads
whose number changes, print stamps in the margin, and title candidates."""

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from glassrag.ingest.base import heading_locators
from glassrag.ingest.docx import load_docx
from glassrag.ingest.markdown import load_markdown
from glassrag.ingest.pdf import Line, drop_running_heads, page_locators, printed_numbers
from glassrag.ingest.titles import choose_title, is_junk
from glassrag.schema import Section
from tests.ingest.build_files import docx_bytes


def test_the_shortest_end_of_the_heading_path_that_is_unique():
    sections = (Section("§ V1 Architecture", 0, 1, ("V1 Architecture",)),
                Section("§ Control Objective", 1, 2, ("V1 Architecture", "Control Objective")),
                Section("§ Control Objective", 2, 3, ("V2 Authentication", "Control Objective")),
                Section("§ Legend", 3, 4, ("V2 Authentication", "Legend")),
                Section("page 4", 4, 5, ()))
    assert [s.locator for s in heading_locators(sections)] == [
        "§ V1 Architecture", "§ V1 Architecture › Control Objective",
        "§ V2 Authentication › Control Objective", "§ Legend", "page 4"]


def test_three_levels_deep_takes_only_what_it_needs():
    paths = [("A", "Setup", "Notes"), ("B", "Setup", "Notes"), ("B", "Use", "Notes")]
    sections = tuple(Section("§ Notes", i, i + 1, p) for i, p in enumerate(paths))
    assert [s.locator for s in heading_locators(sections)] == [
        "§ A › Setup › Notes", "§ B › Setup › Notes", "§ Use › Notes"]


def test_text_before_the_first_heading_has_a_locator():
    md = load_markdown(Path("n.md"), b"An opening paragraph.\n\n# Scope\n\nThe scope.\n")
    assert [s.locator for s in md.sections] == ["§ (start)", "§ Scope"]
    doc = load_docx(Path("d.docx"), docx_bytes([("p", "Issued by the safety office."),
                                                  ("h1", "Scope"), ("p", "The scope.")]))
    assert [s.locator for s in doc.sections] == ["§ (start)", "§ Scope"]
    assert doc.text.startswith("Issued by the safety office.")


def page(*lines: tuple[str, float]) -> list[Line]:
    return [Line(text, y=y) for text, y in lines]


def test_a_chapters_running_head_with_its_changing_number_is_furniture():
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    pages = [page((f"Chapter 1. Scope {n}", 800), ("Note: see annex", 780),
                  (f"The {words[n]} rule opens.", 500), (f"The {words[n]} rule ends.", 300))
             for n in range(1, 4)]
    pages += [page((f"Chapter 2. Roles and separation of duties {n}", 800),
                   (f"The {words[n]} duty opens.", 500), (f"The {words[n]} duty ends.", 300))
              for n in range(4, 8)]
    pages += [page(("Index", 800), ("entries", 400))]
    kept = [[ln.text for ln in p] for p in drop_running_heads(pages)]
    # each chapter's head is on fewer than half of the 8 pages, but its number changes
    assert kept[0] == ["Note: see annex", "The beta rule opens.", "The beta rule ends."]
    assert kept[4] == ["The zeta duty opens.", "The zeta duty ends."]
    assert kept[7] == ["Index", "entries"]


def test_a_print_stamp_drawn_mid_page_but_set_in_the_margin_is_furniture():
    words = ["alpha", "beta", "gamma", "delta", "epsilon"]
    pages = [page((f"The {w} clause opens.", 700), (f"The {w} clause continues.", 650),
                  ("VerDate Sep<11>2014 17:04 Jun 12, 2020 SGM", 820),
                  (f"The {w} clause goes on.", 600), (f"The {w} clause ends.", 500))
             for w in words[:4]]
    assert [[ln.text for ln in p] for p in drop_running_heads(pages)][0] == [
        "The alpha clause opens.", "The alpha clause continues.", "The alpha clause goes on.",
        "The alpha clause ends."]


def test_printed_numbers_need_one_offset_on_most_pages():
    pages = [page(("Intro text", 700), (str(n + 9), 40)) for n in range(1, 6)]
    assert printed_numbers(pages) == {i: i + 10 for i in range(5)}
    assert page_locators([""] * 5, printed_numbers(pages))[:2] == [
        "p. 10 (PDF page 1)", "p. 11 (PDF page 2)"]
    same = [page(("Intro text", 700), (str(n), 40)) for n in range(1, 6)]
    assert printed_numbers(same) == {}  # the printed number is the physical one
    scattered = [page(("Intro", 700), (v, 40)) for v in ("3", "17", "2020", "8", "41")]
    assert printed_numbers(scattered) == {}


def test_dates_and_times_on_page_edges_are_no_page_numbers():
    """Issue 27: a 16-page listing printed from Excel was cited `p. 6 (PDF page 1)`, its
    edge rows' dates 06/22/2015, 07/22/2015 … read as page numbers."""
    for shape in ("{:02d}/22/2015", "2015-{:02d}-22", "22.{:02d}.2015", "{}:30:22"):
        pages = [page(("Listing", 700), (shape.format(n + 5), 40)) for n in range(1, 17)]
        assert printed_numbers(pages) == {}, shape
    numbered = [page(("Printed 06/22/2015 14:30", 700), (f"Page {n + 9}", 40)) for n in range(1, 6)]
    assert printed_numbers(numbered) == {i: i + 10 for i in range(5)}


def test_sentence_tails_section_headings_and_print_stamps_are_no_titles():
    """Issue 27: PDF titles "them.", "1 Introduction", "BOOKING ORDER Print Date 12/15/2024 14:30:22"."""
    assert is_junk("them.") and is_junk("1 Introduction") and is_junk("2.1 Background")
    assert not is_junk("iPhone field guide") and not is_junk("1984 annual report")
    assert choose_title("", "them.", "Survey of sparse retrieval", "p07") == "Survey of sparse retrieval"
    assert choose_title("", "1 Introduction", "", "paper") == "paper"
    assert choose_title("", "BOOKING ORDER Print Date 12/15/2024 14:30:22", "", "b") == "BOOKING ORDER"
    assert choose_title("Order printed 2024-12-15", "", "", "b") == "Order"
    assert choose_title("", "Verification Standard 4.0.3", "", "b") == "Verification Standard 4.0.3"


def test_title_candidates_in_order():
    assert is_junk("PowerPoint Presentation") and is_junk("Slide 1") and is_junk("")
    assert is_junk("Microsoft Word - report.docx") and is_junk("draft_v2.pdf")
    assert is_junk("Prepared by Christian Heinrich") and is_junk("ibm.com/redbooks Redpaper")
    assert not is_junk("Quarterly review 2024")
    assert choose_title("PowerPoint Presentation", "", "Quarterly review", "deck") == "Quarterly review"
    assert choose_title("Slide 1", "", "", "deck") == "deck"
    # a metadata title that the first page does not show as its largest text loses to it
    assert choose_title("Proceedings of the 45th Annual Meeting", "Sparse Information Extraction",
                        "Proceedings of the 45th Annual Meeting, pages 696–703", "p07") == \
        "Sparse Information Extraction"
    # one the first page shows wins
    assert choose_title("Travel Policy", "Travel Policy 2025", "", "t") == "Travel Policy"
    assert choose_title("Travel Policy", "", "", "t") == "Travel Policy"


def quadratic_locators(sections: tuple[Section, ...]) -> list[str]:
    """The definition, as first written: every section's path against every other's."""
    paths = [s.heading_path for s in sections if s.locator.startswith("§ ") and s.heading_path]
    out = []
    for s in sections:
        path = s.heading_path
        if not (s.locator.startswith("§ ") and path):
            out.append(s.locator)
            continue
        for k in range(1, len(path) + 1):
            tail = path[-k:]
            if all(p == path for p in paths if p[-k:] == tail):
                break
        out.append("§ " + " › ".join(tail))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["A", "B", "Notes", "Setup"]), min_size=0, max_size=4), max_size=12))
def test_one_pass_locators_equal_the_pairwise_definition(paths: list[list[str]]):
    """Issue 28, item 5: the one-pass locators (linear in the sections) give exactly what the
    pairwise comparison gave, repeated paths, a path that is another's end and no path included."""
    sections = tuple(Section(f"§ {p[-1]}" if p else "page 1", i, i + 1, tuple(p)) for i, p in enumerate(paths))
    assert [s.locator for s in heading_locators(sections)] == quadratic_locators(sections)


def test_a_path_that_ends_another_keeps_its_whole_path():
    sections = (Section("§ B", 0, 1, ("B",)), Section("§ B", 1, 2, ("A", "B")), Section("§ B", 2, 3, ("B",)))
    assert [s.locator for s in heading_locators(sections)] == ["§ B", "§ A › B", "§ B"]
