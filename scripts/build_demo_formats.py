"""Build the demo handbook's PDF, PPTX and XLSX documents from their Markdown sources.

    .venv/bin/python scripts/build_demo_formats.py [--sources DIR] [--out DIR]

The Markdown files in src/glassrag/data/demo/sources/ are the source of truth; this
script lays them out as real documents in src/glassrag/data/demo/docs/, where they are
ingested (each piece of content exists there once, in one format):

    safety-procedures.md  ->  safety-procedures.pdf   A4 pages with a running header and
                                                      footer, which the PDF loader drops
    release-notes.md      ->  release-notes.pptx      a title slide, then one slide per
                                                      `###` section (a release, a topic)
    price-list.md         ->  price-list.xlsx         one sheet per `##` group, one table
                                                      region per `###` section

The output is byte-for-byte the same on every run with the same package versions: the
documents carry their source's `date` as creation and modification time, and the ZIP
entries of the Office files carry a fixed timestamp. Needs the `docs` extra and fpdf2.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import re
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "src" / "glassrag" / "data" / "demo"
COMPANY = "Fennick Geosystems"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)

sys.path.insert(0, str(ROOT / "src"))
from glassrag.ingest.markdown import split_front_matter  # noqa: E402


# Markdown blocks --------------------------------------------------------------------------

@dataclass
class Block:
    kind: str                      # heading, paragraph, list, table
    text: str = ""
    level: int = 0
    items: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def parse(markdown: str) -> tuple[dict[str, str], list[Block]]:
    """Front matter and the blocks of the small Markdown subset the handbook uses:
    `#` headings, paragraphs, `- ` lists and pipe tables."""
    meta, body = split_front_matter(markdown)
    blocks: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            blocks.append(Block("paragraph", " ".join(para)))
            para.clear()

    for line in body.splitlines():
        stripped = line.strip()
        heading = re.match(r"^(#{1,6})\s+(.+?)\s*$", stripped)
        if not stripped:
            flush()
        elif heading:
            flush()
            blocks.append(Block("heading", heading.group(2), level=len(heading.group(1))))
        elif stripped.startswith("|"):
            flush()
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            if all(re.fullmatch(r":?-+:?", c) for c in cells):
                continue
            if not blocks or blocks[-1].kind != "table":
                blocks.append(Block("table"))
            blocks[-1].rows.append(cells)
        elif stripped.startswith("- "):
            flush()
            if not blocks or blocks[-1].kind != "list":
                blocks.append(Block("list"))
            blocks[-1].items.append(stripped[2:])
        else:
            para.append(stripped)
    flush()
    return meta, blocks


def sections(blocks: list[Block], level: int) -> list[tuple[str, list[Block]]]:
    """The blocks under each heading of `level`, with that heading's text."""
    out: list[tuple[str, list[Block]]] = []
    for b in blocks:
        if b.kind == "heading" and b.level == level:
            out.append((b.text, []))
        elif out and not (b.kind == "heading" and b.level < level):
            out[-1][1].append(b)
    return out


def unnumbered(heading: str) -> str:
    """`2.1 TX-200 version 4.2.1` -> `TX-200 version 4.2.1`."""
    return re.sub(r"^\d+(\.\d+)*\.?\s+", "", heading)


def source_date(meta: dict[str, str]) -> dt.datetime:
    return dt.datetime.fromisoformat(meta["date"])


def fixed_zip(data: bytes, when: dt.datetime) -> bytes:
    """An Office file with fixed ZIP timestamps and its modification time set to `when`."""
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            blob = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                blob = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*(</dcterms:modified>)",
                              rb"\g<1>" + stamp.encode() + rb"\g<2>", blob)
            entry = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(entry, blob)
    return out.getvalue()


# PDF: the safety procedures ---------------------------------------------------------------

def build_pdf(markdown: str) -> bytes:
    from fpdf import FPDF

    meta, blocks = parse(markdown)
    title, issued = meta["title"], meta["date"]

    class Handbook(FPDF):
        def header(self) -> None:
            self.set_font("Helvetica", size=8)
            self.set_text_color(90)
            self.cell(0, 5, f"{COMPANY}  |  {title}", new_x="LMARGIN", new_y="NEXT")
            self.set_draw_color(160)
            self.line(self.l_margin, self.get_y(), self.w - self.r_margin, self.get_y())
            self.ln(6)
            self.set_text_color(0)

        def footer(self) -> None:
            self.set_y(-15)
            self.set_font("Helvetica", size=8)
            self.set_text_color(90)
            self.cell(0, 5, f"Issued {issued}  |  Page {self.page_no()} of {{nb}}", align="R")
            self.set_text_color(0)

    pdf = Handbook(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_margins(22, 18, 22)
    pdf.set_auto_page_break(True, margin=22)
    pdf.set_creation_date(source_date(meta).replace(tzinfo=dt.timezone.utc))
    pdf.set_title(title)
    pdf.set_author(COMPANY)
    pdf.set_producer("glassrag scripts/build_demo_formats.py")
    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin
    for b in blocks:
        if b.kind == "heading":
            size = {1: 18, 2: 13, 3: 11}.get(b.level, 10)
            if b.level > 1 and pdf.get_y() > pdf.page_break_trigger - 30:
                pdf.add_page()  # no heading alone at the foot of a page
            pdf.ln(4 if b.level > 1 else 0)
            pdf.set_font("Helvetica", "B", size)
            pdf.multi_cell(0, size * 0.5, b.text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1.5)
        elif b.kind == "paragraph":
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, b.text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        elif b.kind == "list":
            pdf.set_font("Helvetica", size=10)
            for item in b.items:
                pdf.set_x(pdf.l_margin + 4)
                pdf.multi_cell(width - 4, 5, f"- {item}", new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        elif b.kind == "table":
            pdf.set_font("Helvetica", size=9)
            with pdf.table(col_widths=(55, 111), text_align="LEFT", line_height=4.5,
                           first_row_as_headings=True) as table:
                for cells in b.rows:
                    row = table.row()
                    for cell in cells:
                        row.cell(cell)
            pdf.ln(2)
    return bytes(pdf.output())


# PPTX: the release notes ------------------------------------------------------------------

def build_pptx(markdown: str) -> bytes:
    from pptx import Presentation
    from pptx.enum.text import MSO_AUTO_SIZE
    from pptx.util import Pt

    meta, blocks = parse(markdown)
    when = source_date(meta)
    prs = Presentation()
    props = prs.core_properties
    props.title, props.author, props.last_modified_by = meta["title"], COMPANY, COMPANY
    props.created = props.modified = when
    props.revision = 1

    cover = prs.slides.add_slide(prs.slide_layouts[0])
    cover.shapes.title.text = meta["title"]
    cover.placeholders[1].text = f"{COMPANY}, {meta['date']}"

    for heading, body in sections(blocks, 3):
        slide = prs.slides.add_slide(prs.slide_layouts[1])
        slide.shapes.title.text = unnumbered(heading)
        frame = slide.placeholders[1].text_frame
        frame.auto_size = MSO_AUTO_SIZE.TEXT_TO_FIT_SHAPE
        # a topic slide (no list) shows its first paragraph; the speaker notes hold the rest
        topic = not any(b.kind == "list" for b in body)
        lines: list[tuple[str, int]] = []
        notes: list[str] = []
        for b in body:
            if b.kind == "paragraph" and topic and lines:
                notes.append(b.text)
            elif b.kind == "paragraph":
                lines.append((b.text, 0))
            elif b.kind == "list":
                lines.extend((item, 1) for item in b.items)
        for i, (text, level) in enumerate(lines):
            para = frame.paragraphs[0] if i == 0 else frame.add_paragraph()
            para.text = text
            para.level = level
            for run in para.runs:
                run.font.size = Pt(14 if level else 16)
        if notes:
            slide.notes_slide.notes_text_frame.text = "\n".join(notes)
    out = io.BytesIO()
    prs.save(out)
    return fixed_zip(out.getvalue(), when)


# XLSX: the price list ---------------------------------------------------------------------

NUMBER = re.compile(r"^\d{1,3}(,\d{3})*(\.\d+)?$")


def build_xlsx(markdown: str) -> bytes:
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font

    meta, blocks = parse(markdown)
    when = source_date(meta)
    wb = Workbook()
    wb.remove(wb.active)
    wb.properties.title = meta["title"]
    wb.properties.creator = wb.properties.lastModifiedBy = COMPANY
    wb.properties.created = wb.properties.modified = when
    bold = Font(bold=True)
    wrap = Alignment(wrap_text=True, vertical="top")
    for group, group_blocks in sections(blocks, 2):
        ws = wb.create_sheet(unnumbered(group)[:31])
        row = 1
        widest = 1
        for heading, body in sections(group_blocks, 3):
            if row > 1:
                row += 1  # an empty row between table regions
            ws.cell(row, 1, heading).font = bold
            row += 1
            for b in body:
                if b.kind == "paragraph":
                    ws.cell(row, 1, b.text).alignment = wrap
                    row += 1
                elif b.kind == "table":
                    for r, cells in enumerate(b.rows):
                        widest = max(widest, len(cells))
                        for c, text in enumerate(cells, 1):
                            cell = ws.cell(row, c, text if r == 0 else typed(text))
                            if r == 0:
                                cell.font = bold
                            elif isinstance(cell.value, float):
                                cell.number_format = "0.00"
                            elif isinstance(cell.value, int):
                                cell.number_format = "#,##0"
                        row += 1
        for c, width in zip("ABCDEF", (24, 44, 40, 16, 16, 16)[:widest] if widest > 1 else (100,)):
            ws.column_dimensions[c].width = width
    out = io.BytesIO()
    wb.save(out)
    return fixed_zip(out.getvalue(), when)


def typed(text: str) -> str | int | float:
    """A price as a number (`24,900` -> 24900, `0.65` -> 0.65); any other text as it is."""
    if not NUMBER.match(text):
        return text
    plain = text.replace(",", "")
    return float(plain) if "." in plain else int(plain)


# ------------------------------------------------------------------------------------------

BUILDS = {
    "safety-procedures": (build_pdf, ".pdf"),
    "release-notes": (build_pptx, ".pptx"),
    "price-list": (build_xlsx, ".xlsx"),
}


def build(sources: Path, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (make, suffix) in BUILDS.items():
        target = out / f"{name}{suffix}"
        target.write_bytes(make((sources / f"{name}.md").read_text(encoding="utf-8")))
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", type=Path, default=DEMO / "sources")
    parser.add_argument("--out", type=Path, default=DEMO / "docs")
    args = parser.parse_args(argv)
    for path in build(args.sources, args.out):
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
