"""Issue 51.6: the work of reading a DOCX, XLSX or PPTX is bounded by the file's size before
its parser runs: a DOCX of ~80 KB holding 430,000 one-letter paragraphs (the audit's cost 81 CPU s)
is refused in about a second, per file, and the rest of the folder is ingested; the real Office
files of the fixtures stay far inside the bounds."""

from __future__ import annotations

import io
import time
import zipfile
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.cli.ingest import EXIT_SOME_FILES_FAILED
from glassrag.errors import IngestError
from glassrag.ingest import ooxml_bounds

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real" / "docs"
PARAGRAPH = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"


def dense_docx(paragraphs: int, prefix: bytes = b"w") -> bytes:
    """A valid DOCX whose body holds `paragraphs` one-letter paragraphs (`prefix`: the namespace
    prefix the paragraphs are written with, bound to Word's namespace)."""
    docx = pytest.importorskip("docx")
    buf = io.BytesIO()
    docx.Document().save(buf)
    source = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    paragraph = PARAGRAPH.replace(b"<w:", b"<" + prefix + b":").replace(b"</w:", b"</" + prefix + b":")
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                data = data.replace(b"<w:body>", b"<w:body>" + paragraph * paragraphs, 1)
                if prefix != b"w":
                    data = data.replace(b"<w:document ", b"<w:document xmlns:" + prefix + b'="http://schemas.'
                                        b'openxmlformats.org/wordprocessingml/2006/main" ', 1)
            z.writestr(info, data)
    return out.getvalue()


def test_a_dense_docx_is_refused_quickly_and_the_rest_ingested(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "dense.docx").write_bytes(dense_docx(430_000))
    (docs / "fine.md").write_text("# Fine\n\nThe fleet server updates firmware at night.\n")
    t0 = time.process_time()
    assert main(["ingest", str(docs), "--index", str(tmp_path / "index")]) == EXIT_SOME_FILES_FAILED
    assert time.process_time() - t0 < 20  # the audit's file cost 81 CPU s before
    said = " ".join(capsys.readouterr().err.split())
    assert "dense.docx: holds more than 100,000 XML elements" in said


def test_another_namespace_prefix_is_counted_too(tmp_path: Path) -> None:
    data = dense_docx(40_000, prefix=b"x")
    with pytest.raises(IngestError, match="XML elements"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            ooxml_bounds.check_bounds(tmp_path / "x.docx", archive, len(data))


def test_a_tag_cut_between_two_blocks_is_counted(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(ooxml_bounds, "CHUNK", 7)  # blocks that cut most tags in two
    monkeypatch.setattr(ooxml_bounds, "ELEMENT_FLOOR", 5 * 3)  # five paragraphs of three elements
    monkeypatch.setattr(ooxml_bounds, "ELEMENTS_PER_BYTE", 0.0)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", PARAGRAPH * 5)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as archive:
        ooxml_bounds.check_bounds(tmp_path / "x.docx", archive, 1)  # exactly the bound: taken
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("word/document.xml", PARAGRAPH * 5 + b"<w:p/>")
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as archive, pytest.raises(IngestError):
        ooxml_bounds.check_bounds(tmp_path / "x.docx", archive, 1)  # one more: refused


@pytest.mark.parametrize("name", sorted(p.name for p in REAL.glob("*") if p.suffix in (".docx", ".xlsx", ".pptx")))
def test_real_office_files_are_inside_the_bounds(name: str) -> None:
    data = (REAL / name).read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        ooxml_bounds.check_bounds(REAL / name, archive, len(data))
