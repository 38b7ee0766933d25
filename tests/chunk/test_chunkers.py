"""Contract tests every chunker passes, then each variant's own behaviour."""

from pathlib import Path

import pytest

from glassrag.chunk import CHUNKERS, make_chunker
from glassrag.chunk.units import count_units, sentence_spans
from glassrag.errors import ConfigError, UnknownNameError
from glassrag.ingest.markdown import load_markdown
from glassrag.ingest.text import load_text
from glassrag.schema import Document
from tests.conftest import HANDBOOK


def as_document(ex, doc_id="doc") -> Document:
    return Document(doc_id, ex.title, f"{doc_id}.md", ex.format, ex.text, ex.sections, ex.metadata)


MANUAL = as_document(load_markdown(Path("manual.md"), HANDBOOK["manual.md"].encode()))


@pytest.mark.parametrize("name", sorted(CHUNKERS))
@pytest.mark.parametrize("unit", ["words", "tokens", "chars"])
def test_contract_verbatim_spans_cover_text_deterministically(name, unit):
    size = {"words": 12, "tokens": 15, "chars": 60}[unit]
    chunker = make_chunker(name, size=size, overlap=2 if name in ("fixed", "sentence") else 0, unit=unit)
    chunks = chunker.chunk(MANUAL)
    assert chunks == chunker.chunk(MANUAL)  # deterministic
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for c in chunks:
        assert c.text == MANUAL.text[c.start:c.end]
        assert c.locator.startswith("§ ")
        assert c.text.strip() == c.text
    # every word of the document is in some chunk
    covered = set()
    for c in chunks:
        covered.update(range(c.start, c.end))
    assert all(i in covered for i, ch in enumerate(MANUAL.text) if not ch.isspace())


@pytest.mark.parametrize("name", sorted(CHUNKERS))
def test_contract_empty_document_gives_no_chunks(name):
    empty = Document("e", "E", "e.md", "markdown", "", ())
    assert make_chunker(name, size=10).chunk(empty) == []


def test_unknown_chunker_lists_the_valid_names():
    with pytest.raises(UnknownNameError, match="document, fixed, heading, heading-body, recursive, sentence"):
        make_chunker("semantic")


def test_overlap_must_be_smaller_than_size():
    with pytest.raises(ConfigError, match=r"overlap must be in \[0, size\)"):
        make_chunker("fixed", size=10, overlap=10)


def test_fixed_windows_by_words():
    doc = as_document(load_text(Path("t.txt"), b"a b c d e f g h i j"), "t")
    chunks = make_chunker("fixed", size=4, overlap=1).chunk(doc)
    assert [c.text for c in chunks] == ["a b c d", "d e f g", "g h i j"]
    assert [c.locator for c in chunks] == ["line 1", "line 1", "line 1"]


def test_heading_chunker_gives_one_chunk_per_section():
    chunks = make_chunker("heading", size=200).chunk(MANUAL)
    assert [c.locator for c in chunks] == [s.locator for s in MANUAL.sections]
    sensor = chunks[3]
    assert sensor.text.startswith("2.1 Sensor errors")
    assert "E-4107 means the tilt sensor lost calibration." in sensor.text
    assert sensor.heading_path[-1] == "2.1 Sensor errors"


def test_heading_chunker_splits_long_sections_by_sentence_without_crossing_sections():
    chunks = make_chunker("heading", size=8).chunk(MANUAL)
    sensor = [c.text for c in chunks if c.locator == "§ 2.1 Sensor errors"]
    assert sensor == ["2.1 Sensor errors", "E-4107 means the tilt sensor lost calibration.",
                      "Run the field tilt calibration."]


def test_sentence_chunker_packs_whole_sentences_with_sentence_overlap():
    text = b"One two three. Four five six. Seven eight nine. Ten eleven twelve."
    doc = as_document(load_text(Path("s.txt"), text), "s")
    chunks = make_chunker("sentence", size=6, overlap=3).chunk(doc)
    assert [c.text for c in chunks] == ["One two three. Four five six.",
                                        "Four five six. Seven eight nine.",
                                        "Seven eight nine. Ten eleven twelve."]


def test_recursive_prefers_paragraph_boundaries():
    body = "# T\n\n" + "Alpha beta gamma delta.\n\nEpsilon zeta eta theta.\n\nIota kappa lambda mu."
    doc = as_document(load_markdown(Path("r.md"), body.encode()), "r")
    chunks = make_chunker("recursive", size=8).chunk(doc)
    assert [c.text for c in chunks] == ["T\nAlpha beta gamma delta.",
                                        "Epsilon zeta eta theta.\n\nIota kappa lambda mu."]


def test_sentence_spans_respect_lists_tables_and_wrapped_lines():
    text = "First sentence. Second one!\nA wrapped\nline continues. Next.\n- item one\n| a | b |"
    spans = [text[a:b] for a, b in sentence_spans(text)]
    assert spans == ["First sentence.", "Second one!", "A wrapped\nline continues.", "Next.",
                     "- item one", "| a | b |"]


def test_count_units():
    assert count_units("E-4107 means, roughly: stop.", "words") == 4
    assert count_units("E-4107 means, roughly: stop.", "tokens") == 9
    assert count_units("abc", "chars") == 3
