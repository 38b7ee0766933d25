"""Real public documents read as their authors wrote them (issue 12).

The ten files of tests/fixtures/real/docs/ (provenance and licences in PROVENANCE.md) are
read with the loaders; every expectation below was written by reading the document:
its title, the page numbers it prints, its running heads, the hyphens it means, its table
headers, its heading paths.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from glassrag.ingest import load_document
from glassrag.lexical.analyze import Analyzer
from glassrag.schema import Document

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
DOCS = REAL / "docs"


@pytest.fixture(scope="module")
def docs() -> dict[str, Document]:
    out = {}
    for path in sorted(DOCS.iterdir()):
        doc, warnings = load_document(path, path.stem, path.read_bytes())
        assert warnings == (), (path.name, warnings)  # quality ok, no blank page taken for a scan
        out[path.stem] = doc
    return out


def section(doc: Document, locator: str) -> str:
    found = [doc.section_text(s) for s in doc.sections if s.locator == locator]
    assert len(found) == 1, (locator, [s.locator for s in doc.sections][:20])
    return found[0]


def test_the_files_are_the_ones_provenance_names():
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{16})` \|", (REAL / "PROVENANCE.md").read_text(),
                      re.M)
    assert len(rows) == 10
    assert sorted(name for name, _, _ in rows) == sorted(p.name for p in DOCS.iterdir())
    for name, size, digest in rows:
        data = (DOCS / name).read_bytes()
        assert len(data) == int(size) and hashlib.sha256(data).hexdigest()[:16] == digest, name


# titles: what a reader calls each document (docs/formats.md measures the order)
TITLES = {
    # the metadata title is the proceedings' name; the paper's title is the largest text
    "acl2007-sparse-extraction": "Sparse Information Extraction: Unsupervised Language Models "
                                 "to the Rescue",
    "acl2014-phrase-generation": "How to make words with vectors: Phrase generation in "
                                 "distributional semantics",
    "asvs-5.0.0": "Application Security Verification Standard",
    # no title in the file; its first line is a credit, "Prepared by Christian Heinrich": the
    # file name, made readable (issue 49)
    "top10-comparison": "top10 comparison",
    "asvs-4.0.3": "OWASP Application Security Verification Standard 4.0.3",
    "top10-2017-rc1": "OWASP Top 10 - 2017",
    "top10-mapping": "top10 mapping",
}


@pytest.mark.parametrize("doc_id", sorted(TITLES))
def test_titles(docs, doc_id):
    assert docs[doc_id].title == TITLES[doc_id]


def test_printed_page_numbers_are_cited_beside_the_physical_ones(docs):
    # no page labels; the footer prints 696 … 703
    paper = docs["acl2007-sparse-extraction"]
    assert [s.locator for s in paper.sections] == [
        f"p. {696 + i} (PDF page {i + 1})" for i in range(8)]
    assert paper.metadata["printed_page_numbers"] == {str(i + 1): 696 + i for i in range(8)}
    assert "Second, we employ an instance of the distributional hypothesis" in section(
        paper, "p. 696 (PDF page 1)")
    # page labels are used as they are
    assert [s.locator for s in docs["acl2014-phrase-generation"].sections] == [
        f"page {n}" for n in range(624, 634)]
    # two pages labelled 1: the second is cited by its place, and no locator is used twice
    standard = [s.locator for s in docs["asvs-5.0.0"].sections]
    assert standard[:4] == ["page 1", "PDF page 2", "page 2", "page 3"]
    assert len(set(standard)) == len(standard) == 120


def test_running_heads_and_page_numbers_are_not_in_the_text(docs):
    standard = docs["asvs-5.0.0"]
    # the running header of pages 2-120; "May 2025" stays on the cover and in the licence
    assert "Application Security Verification Standard May 2025" not in standard.text
    assert standard.text.count("May 2025") == 2
    assert "\nVersion 5.0.0, May 2025\n" in standard.text
    for s in standard.sections[2:]:
        last = standard.section_text(s).rsplit("\n", 1)[-1]
        assert last != s.locator.split()[-1], s.locator  # the footer's page number
    paper = docs["acl2007-sparse-extraction"]
    for s in paper.sections:
        assert not re.search(r"\n69\d$|\n70[0-3]$", paper.section_text(s)), s.locator


# Every line-end break of the three typeset PDFs was read: these are the ones where the
# hyphen is the author's (a compound, a name, a code); every other break is a hyphenation.
COMPOUNDS = {
    "acl2007-sparse-extraction": {"HMM-T", "HMM-based", "REL-GRAMS", "frequency-based",
                                  "hand-tagged", "n-gram", "two-sampled", "language-modeling"},
    "acl2014-phrase-generation": {"Callison-Burch", "NPN-paraphrasable", "adjective-noun",
                                  "adjective-nouns", "confidence-based", "cosine-based",
                                  "count-based", "dual-space", "language-to", "noun-preposition",
                                  "observed-eq", "sanity-check", "syntax-dependent",
                                  "vector-based"},
    "asvs-5.0.0": {"800-57", "Gang-GreenTemperTatum", "in-depth", "multi-tenant",
                   "non-applicable", "non-running", "post-quantum", "resource-demanding",
                   "self-explanatory", "fixed-size", "production-ready", "two-dimensional",
                   "auto-escaping", "throw-away", "testing-guide", "williamson-swoop"},
}


def line_end_breaks(path: Path) -> list[tuple[str, bool, bool]]:
    """(`a-b`, the loader before issue 12 kept the hyphen, the loader keeps it now) for every
    line-end break. Before, pdfium's hyphenation mark was always joined and any other
    hyphen kept (`-` glued to the next line, a Unicode hyphen followed by a space)."""
    import pypdfium2 as pdfium

    from glassrag.ingest.hyphens import BREAK, HYPHENS, WORD, Vocabulary, keep_hyphen
    from glassrag.ingest.pdf import drop_running_heads, read_lines

    pdf = pdfium.PdfDocument(path.read_bytes())
    try:
        pages = drop_running_heads([read_lines(pdf[i].get_textpage(), pdfium.raw)
                                    for i in range(len(pdf))])
    finally:
        pdf.close()
    words = Vocabulary(ln.text for lines in pages for ln in lines)
    found = []
    for lines in pages:
        texts = [ln.text.strip() for ln in lines if ln.text.strip()]
        for text in texts:
            for m in BREAK.finditer(text):
                a, b = m.group(1), m.group(2)
                found.append((f"{a}-{b}", False, keep_hyphen(a, b, words)))
        for text, after in zip(texts, texts[1:]):
            if len(text) > 1 and text[-1] in HYPHENS and text[-2].isalnum():
                a, b = WORD.findall(text[:-1]), WORD.findall(after)
                if a and b:
                    a1 = re.split(f"[{HYPHENS}]", a[-1])[-1]
                    b1 = re.split(f"[{HYPHENS}]", b[0])[0]
                    found.append((f"{a1}-{b1}", True, keep_hyphen(a1, b1, words)))
    return found


def hyphen_errors() -> dict[str, dict[str, int]]:
    """Per PDF: its line-end breaks, and both kinds of error before and now: compounds
    glued (`handtagged`), hyphenations kept (`in-frequently`)."""
    out = {}
    for doc_id, compounds in COMPOUNDS.items():
        breaks = line_end_breaks(DOCS / f"{doc_id}.pdf")
        out[doc_id] = {"breaks": len(breaks)}
        for when, i in (("before", 1), ("now", 2)):
            out[doc_id][f"{when}: compounds glued"] = sum(
                1 for b in breaks if b[0] in compounds and not b[i])
            out[doc_id][f"{when}: hyphenations kept"] = sum(
                1 for b in breaks if b[0] not in compounds and b[i])
    return out


def test_line_end_hyphens_both_kinds_of_error_are_counted():
    errors = hyphen_errors()
    print(json.dumps(errors, indent=1))
    assert errors == {
        "acl2007-sparse-extraction": {
            "breaks": 173, "before: compounds glued": 12, "before: hyphenations kept": 0,
            # in-frequently, and three breaks whose next line is a footnote or page number
            "now: compounds glued": 0, "now: hyphenations kept": 4},
        "acl2014-phrase-generation": {
            "breaks": 246, "before: compounds glued": 13, "before: hyphenations kept": 0,
            # sanity-check, dual-space; two breaks before a footnote number
            "now: compounds glued": 2, "now: hyphenations kept": 2},
        "asvs-5.0.0": {
            "breaks": 257, "before: compounds glued": 0, "before: hyphenations kept": 240,
            # auto-escaping, production-ready, throw-away, two-dimensional, a user name;
            # at-tested
            "now: compounds glued": 5, "now: hyphenations kept": 1},
    }


def test_hyphens_in_the_text(docs):
    paper = docs["acl2007-sparse-extraction"].text
    assert "combines HMM-based and n-gram-based language models" in paper
    assert "does not require any hand-tagged seeds" in paper
    assert "HMMbased" not in paper and "handtagged" not in paper and "ngram" not in paper
    assert "relatively frequently" in paper and "rela-tively" not in paper
    standard = docs["asvs-5.0.0"].text
    assert "business logic processes in the correct way" in standard  # was "pro‑ cesses"


def test_sheet_headers_separated_numeric_and_row_labels(docs):
    mapping = section(docs["top10-mapping"], "sheet Top 10 Mapping (C6:E17)")
    # a row of years over the mapping was read as data: "column C: 2017"
    assert mapping.startswith("2017: A01:2017-Injection\n2021: A01:2021-Broken Access Control")
    assert "2017: A04:2017-XML External Entities (XXE)\ncolumn D: (New)\n" in mapping
    assert "column C" not in mapping
    template = section(docs["datacall-template"], "sheet Template (A19:C50)")
    # the header after a blank row, with an empty top-left cell
    assert template.startswith("Number of Unique Applications with this CWE | Total number of CWEs found")
    analysis = docs["datacall-release"].text
    # the column left of every header holds the row labels
    assert "\nA1-Injection\n" in analysis and "column A: A1-Injection" not in analysis


def test_slide_table_keeps_its_header_row(docs):
    risks = section(docs["top10-2017-rc1"], "slide 22: Details About Risk Factors")
    # RISK heads the first column; before, the first risk's row was taken as the header
    assert "RISK: A1-Injection\ncolumn 2: App Specific\ncolumn 3: EASY" in risks
    assert "RISK: A3-XSS\n" in risks
    assert "A1-Injection: A2-Authentication" not in risks
    note = section(docs["top10-2017-rc1"], "slide 11: Broken Access Control")
    assert "Speaker notes:\nCan we squeeze a mention of ‘parameter tampering’?" in note


def test_repeated_headings_are_told_apart_by_their_path(docs):
    standard = docs["asvs-4.0.3"]
    locators = [s.locator for s in standard.sections]
    objectives = [loc for loc in locators if loc.endswith("Control Objective")]
    assert len(objectives) == 15 and len(set(objectives)) == 15
    assert "§ V2 Authentication › Control Objective" in objectives
    assert "§ Control Objective" not in locators and "§ References" not in locators
    assert "§ V2.1 Password Security" in locators  # a unique heading keeps its short form
    assert "at least 12 characters in length" in section(standard, "§ V2.1 Password Security")
    assert section(standard, "§ V2 Authentication › Control Objective").startswith(
        "Control Objective\nAuthentication is the act of establishing")


def test_identifiers_printed_with_other_dashes_are_found_with_a_hyphen(docs):
    analyzer = Analyzer()
    paper = set(analyzer(docs["acl2007-sparse-extraction"].text))
    assert "pages 696–703" in docs["acl2007-sparse-extraction"].text  # an en dash
    assert set(analyzer("pages 696-703")) <= paper and "696-703" in paper
    standard = set(analyzer(docs["asvs-5.0.0"].text))
    assert "client\u2011side validation" in docs["asvs-5.0.0"].text  # a non-breaking hyphen
    assert set(analyzer("client-side validation")) <= standard


def test_no_real_pdf_page_is_taken_for_a_scan(docs):
    for doc_id in ("acl2007-sparse-extraction", "acl2014-phrase-generation", "asvs-5.0.0",
                   "top10-comparison"):
        assert docs[doc_id].metadata["empty_pages"] == []
        assert docs[doc_id].metadata["blank_pages"] == []
