from pathlib import Path

import pytest

from glassrag.errors import IngestError
from glassrag.ingest import load_document
from glassrag.ingest.html import load_html
from glassrag.ingest.markdown import load_markdown, split_front_matter
from glassrag.ingest.text import load_text
from tests.conftest import HANDBOOK


def section_texts(extracted):
    return {s.locator: extracted.text[s.start:s.end] for s in extracted.sections}


def test_markdown_headings_give_sections_and_locators():
    ex = load_markdown(Path("manual.md"), HANDBOOK["manual.md"].encode())
    assert ex.title == "TX-200 Manual"
    assert ex.metadata == {"title": "TX-200 Manual", "date": "2025-02-10"}
    texts = section_texts(ex)
    assert list(texts) == ["§ TX-200 Manual", "§ 1. Setup", "§ 2. Error codes",
                           "§ 2.1 Sensor errors", "§ 2.2 Power errors"]
    assert texts["§ 2.1 Sensor errors"] == (
        "2.1 Sensor errors\nE-4107 means the tilt sensor lost calibration. "
        "Run the field tilt calibration.")
    sensor = next(s for s in ex.sections if s.locator == "§ 2.1 Sensor errors")
    assert sensor.heading_path == ("TX-200 Manual", "2. Error codes", "2.1 Sensor errors")
    assert "#" not in ex.text and "---" not in ex.text


def test_markdown_heading_inside_code_fence_is_not_a_section():
    ex = load_markdown(Path("a.md"), b"# A\n\n```\n# not a heading\n```\n")
    assert [s.locator for s in ex.sections] == ["§ A"]


def test_front_matter_only_when_fenced():
    assert split_front_matter("title: x\n# A") == ({}, "title: x\n# A")
    assert split_front_matter("---\ntitle: 'Q'\n---\nbody") == ({"title": "Q"}, "body")


def test_html_drops_scripts_and_styles_and_keeps_tables():
    ex = load_html(Path("travel.html"), HANDBOOK["travel.html"].encode())
    assert ex.title == "Travel policy"
    assert "secret" not in ex.text and "color" not in ex.text
    texts = section_texts(ex)
    assert "Lisbon | EUR 45" in texts["§ Per diem"]
    assert texts["§ Mileage"].startswith("Mileage\nPrivate cars")


def test_text_crlf_and_one_section():
    ex = load_text(Path("n.txt"), b"First line\r\nSecond line\r\n")
    assert ex.text == "First line\nSecond line"
    assert ex.title == "First line"
    assert len(ex.sections) == 1


def test_undecodable_and_binary_files_name_the_file():
    with pytest.raises(IngestError, match=r"bad\.md: not UTF-8 text \(bad byte at offset 2\)"):
        load_document(Path("bad.md"), "bad", b"ok\xff\xfe rest")
    with pytest.raises(IngestError, match="NUL bytes"):
        load_document(Path("bin.txt"), "bin", b"abc\x00def")


def test_utf16_with_bom_is_read():
    doc, _ = load_document(Path("u.txt"), "u", "Grüße aus Tarnwick".encode("utf-16"))
    assert doc.text == "Grüße aus Tarnwick"


def test_document_without_text_is_an_error():
    with pytest.raises(IngestError, match="no text could be extracted"):
        load_document(Path("empty.html"), "e", b"<html><script>x</script></html>")
