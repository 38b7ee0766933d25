"""The chunk contract as properties over generated documents (issue 13.8): every chunk is a
verbatim span without white space at either end, no longer than `size` in its unit (with
`unit = chars` the joining white space counts), inside one section for the chunkers that
keep to sections, and together the chunks hold every visible character they should."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glassrag.chunk import make_chunker
from glassrag.chunk.units import UNITS, count_units
from glassrag.schema import Document, Section

# words, sentence ends, list marks, blank lines and runs of spaces: what the rules look at
PIECES = st.sampled_from(["reboot", "The", "unit", "E-4107", "it", ".", "!", "?", " ", "  ", "\n",
                          "\n\n", "- ", "1. ", "| a |", "\t", "ü", "x" * 30])


@st.composite
def documents(draw: st.DrawFn) -> Document:
    text = "".join(draw(st.lists(PIECES, max_size=60)))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=5))))
    bounds = [0, *cuts, len(text)]
    sections = tuple(Section(f"§ {i}", a, b, (f"h{i}",))
                     for i, (a, b) in enumerate(zip(bounds, bounds[1:])) if b > a)
    return Document("d", "d", "d.md", "markdown", text, sections)


@st.composite
def chunkers(draw: st.DrawFn):
    name = draw(st.sampled_from(["fixed", "sentence", "heading", "recursive"]))
    unit = draw(st.sampled_from(UNITS))
    size = draw(st.integers(1, 40))
    overlap = draw(st.integers(0, size - 1))
    return make_chunker(name, size=size, overlap=overlap, unit=unit)


@given(documents(), chunkers())
def test_every_chunk_keeps_the_contract(doc: Document, chunker) -> None:
    chunks = chunker.chunk(doc)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert c.text == doc.text[c.start:c.end]
        assert c.text and c.text == c.text.strip(), f"white space kept at an end: {c.text!r}"
        assert count_units(c.text, chunker.unit) <= chunker.size, (c.text, chunker.params())
        if chunker.name in ("heading", "recursive"):  # no chunk crosses a section
            assert any(s.start <= c.start and c.end <= s.end for s in doc.sections)
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    visible = {i for s in doc.sections for i in range(s.start, s.end) if not doc.text[i].isspace()}
    if chunker.name == "fixed" or chunker.name == "sentence":
        visible = {i for i, ch in enumerate(doc.text) if not ch.isspace()}
    assert visible <= covered
    assert chunks == chunker.chunk(doc)


def test_a_section_that_fits_whole_has_no_white_space_at_its_ends():
    """The audit's example: the heading chunker kept `reboot.  ` with its trailing spaces."""
    text = "Turn it off and on.  Then reboot.  \n\nNext part."
    doc = Document("d", "d", "d.md", "markdown", text, (Section("§ 1", 0, 35), Section("§ 2", 35, len(text))))
    for name in ("heading", "recursive"):
        texts = [c.text for c in make_chunker(name, size=200).chunk(doc)]
        assert texts == ["Turn it off and on.  Then reboot.", "Next part."], name


def test_chars_count_the_white_space_that_joins_sentences():
    """Three sentences of 9 characters and the spaces between them: 9 + 1 + 9 = 19 fits in
    20, 9 + 1 + 9 + 1 + 9 = 29 does not; before the fix the joins were not counted (27 ≤ 28)."""
    text = "Aaaa bbb. Cccc ddd. Eeee fff."
    doc = Document("d", "d", "d.txt", "text", text, (Section("lines", 0, len(text)),))
    for name in ("sentence", "heading", "recursive"):
        chunks = make_chunker(name, size=28, unit="chars").chunk(doc)
        assert [c.text for c in chunks] == ["Aaaa bbb. Cccc ddd.", "Eeee fff."], name
        assert max(len(c.text) for c in chunks) <= 28
