"""Table headers from the structure the parsers give: blank rows, merged and numeric header
rows, an empty top-left cell, a merged caption row (small files built here; the real
documents are in test_real_documents.py)."""

import io
from pathlib import Path

from glassrag.ingest.pptx import load_pptx
from glassrag.ingest.tables import render_table
from glassrag.ingest.xlsx import load_xlsx
from tests.ingest.build_files import xlsx_bytes


def merged_workbook() -> bytes:
    """Region | 2024 (merged over three columns) over Q1 Q2 Q3, then a blank row, then data."""
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.title = "Revenue"
    ws["A1"], ws["B1"] = "Region", "2024"
    ws.merge_cells("B1:D1")
    ws.merge_cells("A1:A2")
    ws["B2"], ws["C2"], ws["D2"] = "Q1", "Q2", "Q3"
    for r, row in enumerate([("North", 10, 12, 15), ("South", 7, 8, 9)], 4):
        for c, value in enumerate(row, 1):
            ws.cell(r, c, value)
    out = io.BytesIO()
    wb.save(out)
    return out.getvalue()


def test_a_merged_header_names_every_column_under_it_with_its_sub_header():
    ex = load_xlsx(Path("revenue.xlsx"), merged_workbook())
    assert [s.locator for s in ex.sections] == ["sheet Revenue (A1:D5)"]
    assert "Region: North\n2024 Q1: 10\n2024 Q2: 12\n2024 Q3: 15" in ex.text
    assert "Region: South\n2024 Q1: 7" in ex.text
    assert "column" not in ex.text


def test_a_header_row_separated_from_its_data_by_a_blank_row_still_names_it():
    data = xlsx_bytes({"Zones": [["Zone", "Limit (km/h)", "Note"], [None],
                                 ["NA", "30", "near the gate"], ["EU", "20", "in the yard"]]})
    ex = load_xlsx(Path("zones.xlsx"), data)
    assert [s.locator for s in ex.sections] == ["sheet Zones (A1:C4)"]
    assert "Zone: NA\nLimit (km/h): 30\nNote: near the gate" in ex.text
    assert "column A" not in ex.text


def test_a_lone_header_row_does_not_swallow_an_unrelated_table_below():
    data = xlsx_bytes({"S": [["Owner", "Kim"], [None], [None, None, "Part", "Price"],
                             [None, None, "tripod", "465"]]})
    ex = load_xlsx(Path("s.xlsx"), data)
    assert [s.locator for s in ex.sections] == ["sheet S (A1:B1)", "sheet S (C3:D4)"]
    assert "Part: tripod\nPrice: 465" in ex.text


def test_a_row_of_numbers_over_rows_of_text_is_the_header():
    data = xlsx_bytes({"Map": [[2017, 2021], ["A01:2017-Injection", "A01:2021-Broken Access"],
                               ["A02:2017-Auth", "A02:2021-Crypto"]]})
    ex = load_xlsx(Path("map.xlsx"), data)
    assert "2017: A01:2017-Injection\n2021: A01:2021-Broken Access" in ex.text
    # a row of numbers over more numbers is data, as before
    data = xlsx_bytes({"N": [[1, 2], [3, 4]]})
    assert load_xlsx(Path("n.xlsx"), data).text == "column A: 1\ncolumn B: 2\n\ncolumn A: 3\ncolumn B: 4"


def test_an_empty_top_left_cell_makes_the_first_column_row_labels():
    assert render_table([["", "Q1", "Q2"], ["Revenue", "10", "12"], ["Cost", "7", "8"]],
                        header_row=True) == "Revenue\nQ1: 10\nQ2: 12\n\nCost\nQ1: 7\nQ2: 8"


def test_a_header_row_with_one_filled_cell_is_still_the_header_of_a_grid_table():
    rows = [["RISK", "", ""], ["A1-Injection", "EASY", "SEVERE"], ["A2-Auth", "AVERAGE", "SEVERE"]]
    assert render_table(rows, header_row=True) == (
        "RISK: A1-Injection\ncolumn 2: EASY\ncolumn 3: SEVERE\n\n"
        "RISK: A2-Auth\ncolumn 2: AVERAGE\ncolumn 3: SEVERE")
    # without header_row (a sheet region), a one-cell row is a caption and the first data
    # row becomes the header: what PowerPoint tables got before
    assert render_table(rows) == ("RISK\n\nA1-Injection: A2-Auth\nEASY: AVERAGE\n"
                                  "SEVERE: SEVERE")


def test_a_pptx_table_with_an_empty_top_left_cell_and_a_merged_caption_row():
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[5])
    slide.shapes.title.text = "Quarterly figures"
    table = slide.shapes.add_table(4, 3, Inches(1), Inches(2), Inches(6), Inches(2)).table
    table.cell(0, 0).merge(table.cell(0, 2))
    table.cell(0, 0).text = "All figures in EUR thousand, audited by an external firm"
    for r, row in enumerate([["", "Q1", "Q2"], ["Revenue", "10", "12"], ["Cost", "7", "8"]], 1):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    prs.save(out)
    ex = load_pptx(Path("q.pptx"), out.getvalue())
    assert ex.text == ("Quarterly figures\nAll figures in EUR thousand, audited by an external firm"
                       "\n\nRevenue\nQ1: 10\nQ2: 12\n\nCost\nQ1: 7\nQ2: 8")
