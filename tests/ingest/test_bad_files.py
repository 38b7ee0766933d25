"""Bad input: every bad file is reported with its path and reason, the others are ingested."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import IngestError
from glassrag.indexer import build_index
from glassrag.ingest import MB, load_document
from tests.ingest.build_files import docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
CONFIG = Config().with_overrides(lsa={"dim": 2})


def reason(path: Path, data: bytes) -> str:
    with pytest.raises(IngestError) as err:
        load_document(path, path.stem, data)
    assert err.value.path == str(path)
    return err.value.reason


def test_corrupt_pdf():
    good = pdf_bytes([["Some text."]])
    assert reason(Path("broken.pdf"), b"%PDF-1.7\n" + bytes(range(256)) * 8) == (
        "damaged PDF: Failed to load document (PDFium: Data format error).")
    assert reason(Path("cut.pdf"), good[: len(good) // 3]).startswith("damaged PDF")


def test_encrypted_pdf_needs_a_password():
    data = pdf_bytes([["Secret text."]], user_password="tarnwick")
    assert reason(Path("locked.pdf"), data) == "encrypted: the PDF needs a password to open"


@pytest.mark.parametrize("name, data, expected", [
    ("image.pdf", PNG, "not a PDF: the content looks like a PNG image"),
    ("notes.xlsx", b"Part number;Price\n740-0040;189\n",
     "not an Excel workbook (XLSX): the content looks like plain text"),
    ("deck.pptx", PNG, "not a PowerPoint presentation (PPTX): the content looks like a PNG image"),
    ("old.docx", OLE2, "not a Word document (DOCX): this is a password-protected Office file or "
                       "a legacy binary one (.doc, .xls, .ppt)"),
    ("report.pdf", b"Just some text in a file called .pdf",
     "not a PDF: the content looks like plain text"),
])
def test_wrong_extension_says_what_the_content_is(name, data, expected):
    assert reason(Path(name), data) == expected


def test_office_file_of_another_kind_says_which_and_how_to_fix():
    with pytest.raises(IngestError) as err:
        load_document(Path("memo.xlsx"), "memo", docx_bytes([("p", "A memo.")]))
    assert err.value.reason == "not an Excel workbook (XLSX): this is a Word document (DOCX)"
    assert err.value.hint == "rename it to .docx"


def test_truncated_office_file_is_damaged():
    data = xlsx_bytes({"S": [["a", "b"]]})
    assert reason(Path("cut.xlsx"), data[: len(data) // 2]).startswith("damaged XLSX file")


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pypdfium2", None)  # import pypdfium2 now fails
    with pytest.raises(IngestError) as err:
        load_document(Path("a.pdf"), "a", pdf_bytes([["Text."]]))
    assert err.value.reason == ("reading .pdf files needs the optional package pypdfium2, "
                                "which is not installed")
    assert err.value.hint == "pip install 'glassrag[docs]'"


@pytest.mark.slow
def test_glassrag_imports_without_the_docs_packages():
    blocked = ("import sys\n"
               "for m in ('pypdfium2', 'pptx', 'openpyxl', 'docx'): sys.modules[m] = None\n")
    code = blocked + "import glassrag.cli, glassrag.indexer, glassrag.ingest\nprint('ok')"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_xlsx_with_100000_rows_is_streamed(monkeypatch):
    """Read-only mode (rows streamed, not a cell object each) is what bounds the memory."""
    import openpyxl
    from openpyxl import Workbook

    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Readings")
    ws.append(["Station", "Reading (mm)"])
    for i in range(100_000):
        ws.append([f"ST-{i:06d}", i])
    out = io.BytesIO()
    wb.save(out)

    modes = []
    real = openpyxl.load_workbook

    def spy(*args, **kwargs):
        modes.append(kwargs.get("read_only"))
        return real(*args, **kwargs)

    monkeypatch.setattr(openpyxl, "load_workbook", spy)
    doc, warnings = load_document(Path("readings.xlsx"), "readings", out.getvalue())
    assert modes == [True]
    assert [s.locator for s in doc.sections] == ["sheet Readings (A1:B100001)"]
    assert doc.text.endswith("Station: ST-099999\nReading (mm): 99999")
    assert doc.text.count("Station: ") == 100_000
    assert warnings == ()


@pytest.fixture
def messy(tmp_path: Path) -> Path:
    """A folder of good files with every kind of bad one among them."""
    root = tmp_path / "Dokumente mit Leerzeichen"
    root.mkdir()
    (root / "Preisliste März 2025.xlsx").write_bytes(
        xlsx_bytes({"Preise": [["Artikel", "Preis"], ["BP-40", 189]]}))
    (root / "deck.pptx").write_bytes(pptx_bytes([{"title": "Warranty", "body": ["Two years."]}]))
    (root / "safety.pdf").write_bytes(pdf_bytes([["Work may resume 30 minutes after thunder."]]))
    (root / "corrupt.pdf").write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 50)
    (root / "locked.pdf").write_bytes(pdf_bytes([["Secret."]], user_password="pw"))
    (root / "zero.pdf").write_bytes(b"")
    (root / "image.pdf").write_bytes(PNG)
    (root / "table.xlsx").write_text("Part;Price\n", encoding="utf-8")
    (root / "blank.docx").write_bytes(docx_bytes([]))
    with open(root / "huge.pdf", "wb") as f:  # sparse: 200 MB long, no disk used
        os.truncate(f.fileno(), 200 * MB)
    (root / "loop").mkdir()
    os.symlink(root, root / "loop" / "back")
    return root


EXPECTED_FAILURES = {
    "corrupt.pdf": "damaged PDF: Failed to load document (PDFium: Data format error).",
    "locked.pdf": "encrypted: the PDF needs a password to open",
    "zero.pdf": "empty file (0 bytes)",
    "image.pdf": "not a PDF: the content looks like a PNG image",
    "table.xlsx": "not an Excel workbook (XLSX): the content looks like plain text",
    "blank.docx": "no text could be extracted",
    "huge.pdf": "too large: 200.0 MB, the limit is 100 MB",
}


def test_each_bad_file_is_reported_and_the_others_are_ingested(messy: Path):
    index, report = build_index([messy], CONFIG)
    assert sorted(index.documents) == ["Preisliste März 2025", "deck", "safety"]
    failed = {Path(e.path).name: e.reason for e in report.failed}
    assert failed == EXPECTED_FAILURES
    assert all(Path(e.path).parent == messy for e in report.failed)
    assert any("symlink loop" in why for _, why in report.skipped)
    price = index.documents["Preisliste März 2025"]
    assert price.sections[0].locator == "sheet Preise (A1:B2)"
    assert "Artikel: BP-40\nPreis: 189" in price.text


@pytest.mark.slow
def test_cli_exit_code_is_5_when_some_files_failed(messy: Path, tmp_path: Path):
    run = subprocess.run([sys.executable, "-m", "glassrag.cli", "ingest", str(messy),
                          "--index", str(tmp_path / "idx")],
                         capture_output=True, text=True, check=False,
                         env={**os.environ, "COLUMNS": "250"})
    assert run.returncode == 5, run.stderr
    errors = " ".join(run.stderr.split())
    for name, why in EXPECTED_FAILURES.items():
        assert f"{messy / name}: {why}" in errors
    assert (tmp_path / "idx").exists()


def test_a_docx_of_empty_tables_is_not_told_it_needs_ocr(tmp_path):
    """Issue 27: a DOCX holding only empty tables was told "if it is a scan, it needs OCR"."""
    from glassrag.errors import IngestError
    from glassrag.ingest import load_document
    from tests.ingest.build_files import docx_bytes

    path = tmp_path / "empty.docx"
    data = docx_bytes([("table", [["", ""], ["", ""]])])
    with pytest.raises(IngestError) as info:
        load_document(path, "empty", data)
    assert "no text could be extracted" in str(info.value)
    assert "OCR" not in info.value.hint and "empty paragraphs and tables" in info.value.hint
