"""Small real PDF, PPTX, XLSX and DOCX files, built in memory for the loader tests."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from typing import Any, Sequence

WHEN = dt.datetime(2025, 3, 14, 9, 30)


def pdf_bytes(pages: Sequence[Sequence[str]], *, header: str = "", footer: str = "",
              title: str = "", labels: dict[int, tuple[str, str, int]] | None = None,
              user_password: str = "", scans: Sequence[int] = ()) -> bytes:
    """A4 pages of 11 pt Helvetica paragraphs. `header`/`footer` are drawn on every page
    (`{page}` and `{pages}` are filled in); `labels` maps a 0-based page index to the
    page-label range it starts: (style, prefix, first number), e.g. ("r", "", 1) for i, ii.
    An empty list of paragraphs gives a page without any text: a framed empty box, or, for
    the 0-based page indexes in `scans`, a grey image (what a scanned page is)."""
    from fpdf import FPDF

    class Doc(FPDF):
        def header(self) -> None:
            if header:
                self.set_font("Helvetica", size=8)
                self.cell(0, 5, header.format(page=self.page_no(), pages="{nb}"),
                          new_x="LMARGIN", new_y="NEXT")
                self.ln(4)

        def footer(self) -> None:
            if footer:
                self.set_y(-15)
                self.set_font("Helvetica", size=8)
                self.cell(0, 5, footer.format(page=self.page_no(), pages="{nb}"), align="C")

    pdf = Doc(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_creation_date(WHEN.replace(tzinfo=dt.timezone.utc))
    if title:
        pdf.set_title(title)
    if user_password:
        pdf.set_encryption(owner_password="owner-" + user_password, user_password=user_password)
    for i, paragraphs in enumerate(pages):
        pdf.add_page()
        if labels and i in labels:
            style, prefix, start = labels[i]
            pdf.set_page_label(style, prefix or None, start)
        if not paragraphs and i in scans:
            from PIL import Image

            pdf.image(Image.new("L", (40, 60), 200), x=20, y=20, w=120)
        elif not paragraphs:
            pdf.rect(30, 30, 100, 60)  # something on the page, but no text and no image
        pdf.set_font("Helvetica", size=11)
        for text in paragraphs:
            pdf.multi_cell(0, 5.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
    return bytes(pdf.output())


def pptx_bytes(slides: Sequence[dict[str, Any]], title: str = "") -> bytes:
    """Slides of {"title": str, "body": [lines], "table": [[cells]], "notes": str,
    "group": [texts]}; a slide without "title" uses the blank layout."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    prs.core_properties.title = title
    prs.core_properties.modified = WHEN
    for spec in slides:
        slide = prs.slides.add_slide(prs.slide_layouts[1 if spec.get("title") else 6])
        if spec.get("title"):
            slide.shapes.title.text = spec["title"]
            body = slide.placeholders[1].text_frame
            for i, line in enumerate(spec.get("body", [])):
                para = body.paragraphs[0] if i == 0 else body.add_paragraph()
                para.text = line
        elif spec.get("body"):
            box = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1))
            box.text_frame.text = "\n".join(spec["body"])
        if spec.get("table"):
            rows = spec["table"]
            shape = slide.shapes.add_table(len(rows), len(rows[0]), Inches(1), Inches(5),
                                           Inches(6), Inches(1.5))
            for r, cells in enumerate(rows):
                for c, text in enumerate(cells):
                    shape.table.cell(r, c).text = text
        if spec.get("group"):
            group = slide.shapes.add_group_shape()
            for k, text in enumerate(spec["group"]):
                box = group.shapes.add_textbox(Inches(1 + 3 * k), Inches(6.5), Inches(2),
                                               Inches(0.5))
                box.text_frame.text = text
        if spec.get("notes"):
            slide.notes_slide.notes_text_frame.text = spec["notes"]
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[Any]]], title: str = "") -> bytes:
    """Sheets of rows; a cell is a value, None (empty) or (value, number_format)."""
    from openpyxl import Workbook

    wb = Workbook()
    wb.remove(wb.active)
    wb.properties.title = title or None
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for r, row in enumerate(rows, 1):
            for c, value in enumerate(row, 1):
                fmt = None
                if isinstance(value, tuple):
                    value, fmt = value
                if value is None:
                    continue
                cell = ws.cell(r, c, value)
                if fmt:
                    cell.number_format = fmt
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def with_cached_value(xlsx: bytes, cell: str, value: str) -> bytes:
    """The workbook with a cached result written for the formula in `cell` of the first
    sheet, as Excel would save it (openpyxl writes formulas without results)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(xlsx)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            blob = src.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                blob = re.sub(rf'(<c r="{cell}"[^>]*>)(<f>[^<]*</f>)(<v\s*/>|<v></v>)?'.encode(),
                              rb"\g<1>\g<2><v>" + value.encode() + rb"</v>", blob)
            dst.writestr(item, blob)
    return out.getvalue()


def docx_bytes(blocks: Sequence[tuple[str, Any]], title: str = "") -> bytes:
    """Blocks of ("title" | "h1" | "h2" | "p" | "outline1", text) or ("table", rows)."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    document.core_properties.title = title
    document.core_properties.modified = WHEN
    for kind, content in blocks:
        if kind == "title":
            document.add_paragraph(content, style="Title")
        elif kind in ("h1", "h2"):
            document.add_heading(content, level=int(kind[1]))
        elif kind == "p":
            document.add_paragraph(content)
        elif kind == "outline1":  # a heading in a custom style, known by its outline level
            styles = document.styles
            if "Kapitel" not in [s.name for s in styles]:
                style = styles.add_style("Kapitel", WD_STYLE_TYPE.PARAGRAPH)
                level = OxmlElement("w:outlineLvl")
                level.set(qn("w:val"), "0")
                style.element.get_or_add_pPr().append(level)
            document.add_paragraph(content, style="Kapitel")
        elif kind == "table":
            table = document.add_table(rows=len(content), cols=len(content[0]))
            for r, cells in enumerate(content):
                for c, text in enumerate(cells):
                    table.cell(r, c).text = text
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
