"""How much XML an Office Open XML file (DOCX, XLSX, PPTX) may make its parser read, checked
before the parser runs (issue 51.6). The text limit (ingest/__init__.py text_limit) bounds what a
file gives, not the work of getting it: 44 KB of DOCX holding ~430,000 one-letter paragraphs
cost 81 CPU s, 0.44 MB ran past 600 s, as python-docx, openpyxl and python-pptx spend tens of
microseconds per element. So the work is bounded by the file's own size:

    XML elements     ≤ max(ELEMENT_FLOOR, ELEMENTS_PER_BYTE × file bytes)
    XML bytes        ≤ max(XML_FLOOR, XML_RATIO × file bytes)   (declared, unpacked)

Measured on the six Office files of tests/fixtures/real/docs: 0.07-0.23 start tags per byte of
the file (asvs-3.0.1-checklist.xlsx the densest), 3.3-6.2 unpacked XML bytes per byte. The bounds
are about 4× and 16× those; every start tag is counted, whatever its namespace prefix, so a
renamed prefix does not slip past. Counting streams each part and stops at the bound.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from glassrag.errors import IngestError

ELEMENTS_PER_BYTE = 1.0
ELEMENT_FLOOR = 100_000
XML_RATIO = 100.0
XML_FLOOR = 64 * 1024 * 1024
START_TAG = re.compile(rb"<[A-Za-z_]")
CHUNK = 1 << 20
HINT = ("a document this dense would take minutes to read; if it is genuine, split it or save it "
        "again from its program; it was skipped")


def check_bounds(path: Path, archive: zipfile.ZipFile, file_bytes: int) -> None:
    """IngestError when the archive's XML parts unpack past the byte bound or hold more start
    tags than the element bound (module docstring)."""
    parts = [i for i in archive.infolist() if i.filename.endswith((".xml", ".rels"))]
    most_bytes = max(XML_FLOOR, int(XML_RATIO * file_bytes))
    unpacked = sum(i.file_size for i in parts)
    if unpacked > most_bytes:
        raise IngestError(str(path), f"its XML unpacks to {unpacked / 2**20:.0f} MB, more than the "
                                     f"{most_bytes / 2**20:.0f} MB a {file_bytes / 2**20:.2f} MB file may", HINT)
    most = max(ELEMENT_FLOOR, int(ELEMENTS_PER_BYTE * file_bytes))
    seen = 0
    for info in parts:
        with archive.open(info) as stream:
            carry = b""
            while block := stream.read(CHUNK):
                text = carry + block
                seen += len(START_TAG.findall(text))
                carry = b"<" if text.endswith(b"<") else b""  # a tag cut between two blocks
                if seen > most:
                    raise IngestError(str(path), f"holds more than {most:,} XML elements "
                                                 f"({ELEMENTS_PER_BYTE:g} per byte of the file, at least "
                                                 f"{ELEMENT_FLOOR:,})", HINT)
