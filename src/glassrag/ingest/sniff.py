"""What a file's bytes are, whatever its extension says: PDF and Office loaders check the
signature first, so a PNG named `.pdf` or a text file named `.xlsx` is reported as such
instead of surfacing as a parser's stack trace.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

from glassrag.errors import IngestError
from glassrag.ingest.ooxml_bounds import check_bounds

OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"PK\x03\x04", "a ZIP archive"),
    (OLE2, "a legacy Office file (.doc, .xls, .ppt) or a password-protected Office file"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
)

# the part that makes a ZIP archive an Office Open XML file of each kind
OOXML_PARTS: dict[str, str] = {
    "docx": "word/document.xml",
    "xlsx": "xl/workbook.xml",
    "pptx": "ppt/presentation.xml",
}
OOXML_NAMES = {"docx": "a Word document (DOCX)", "xlsx": "an Excel workbook (XLSX)",
               "pptx": "a PowerPoint presentation (PPTX)"}
MISMATCH_HINT = "check that the file's extension matches its content, and rename it if not"


def describe(data: bytes) -> str:
    """A short description of what `data` looks like, for an error message."""
    for magic, what in SIGNATURES:
        if data.startswith(magic):
            return what
    if b"%PDF-" in data[:1024]:
        return "a PDF document"
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as err:
        text = head[: err.start].decode("utf-8") if err.start > len(head) - 4 else ""
    if text and sum(c.isprintable() or c.isspace() for c in text) >= 0.95 * len(text):
        return "plain text"
    return "unknown binary data"


def expect_pdf(path: Path, data: bytes) -> None:
    """A PDF has `%PDF-` in its first 1024 bytes (ISO 32000-1, 7.5.2, and its
    implementation note: readers accept the header anywhere in the first 1024 bytes)."""
    if b"%PDF-" not in data[:1024]:
        raise IngestError(str(path), f"not a PDF: the content looks like {describe(data)}",
                          MISMATCH_HINT)


def expect_ooxml(path: Path, data: bytes, kind: str) -> None:
    """An Office Open XML file is a ZIP archive holding the main part of its kind."""
    name = OOXML_NAMES[kind]
    if data.startswith(OLE2):
        raise IngestError(
            str(path), f"not {name}: this is a password-protected Office file or a legacy "
            "binary one (.doc, .xls, .ppt)",
            f"open it in its program and save an unprotected copy as .{kind}")
    if not data.startswith(b"PK\x03\x04"):
        raise IngestError(str(path), f"not {name}: the content looks like {describe(data)}",
                          MISMATCH_HINT)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if OOXML_PARTS[kind] in names:
                check_bounds(path, archive, len(data))  # the parser's work, bounded (ooxml_bounds.py)
                return
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as err:  # a part that will not unpack
        raise IngestError(str(path), f"damaged {kind.upper()} file: {err}",
                          "the file is incomplete or corrupt; save or download it again") from None
    other = next((k for k, part in OOXML_PARTS.items() if part in names), None)
    if other is not None:
        raise IngestError(str(path), f"not {name}: this is {OOXML_NAMES[other]}",
                          f"rename it to .{other}")
    raise IngestError(str(path), f"not {name}: a ZIP archive without {OOXML_PARTS[kind]}",
                      MISMATCH_HINT)
