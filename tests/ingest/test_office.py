"""PPTX, XLSX and DOCX loaders: real files made with python-pptx, openpyxl and python-docx."""

import datetime as dt
from pathlib import Path

import pytest

from glassrag.errors import IngestError
from glassrag.ingest import load_document
from glassrag.ingest.docx import load_docx
from glassrag.ingest.pptx import load_pptx
from glassrag.ingest.tables import render_table
from glassrag.ingest.xlsx import cell_text, format_number, load_xlsx
from tests.ingest.build_files import docx_bytes, pptx_bytes, with_cached_value, xlsx_bytes


def sections(extracted):
    return {s.locator: extracted.text[s.start:s.end] for s in extracted.sections}


# tables -------------------------------------------------------------------------------------

def test_table_rows_become_header_value_records():
    rows = [["3.1 Batteries", "", ""], ["Battery", "Fits", "Price (EUR)"],
            ["BP-40", "TX-200", "189"], ["BP-400", "", "465"], ["Both charge in the CH-4.", "", ""]]
    assert render_table(rows) == (
        "3.1 Batteries\n\n"
        "Battery: BP-40\nFits: TX-200\nPrice (EUR): 189\n\n"
        "Battery: BP-400\nPrice (EUR): 465\n\n"
        "Both charge in the CH-4.")


def test_a_table_of_only_a_header_keeps_it_and_empty_headers_get_column_names():
    assert render_table([["Item", "Price"]]) == "Item | Price"
    assert render_table([["Item", "", "Price"], ["BP-40", "TX-200", "189"]]) == (
        "Item: BP-40\ncolumn 2: TX-200\nPrice: 189")


# PPTX ---------------------------------------------------------------------------------------

DECK = [
    {"title": "Release notes 2025", "body": ["Fennick Geosystems"]},
    {"body": ["A slide without a title."]},
    {"title": "Warranty",
     "body": ["Every instrument carries a two-year warranty.", "Batteries: one year."],
     "table": [["Item", "Price (EUR)"], ["BP-40", "189"]],
     "notes": "Mention the Care plans here.", "group": ["Left box", "Right box"]},
]


def test_pptx_slides_give_locators_with_titles():
    ex = load_pptx(Path("deck.pptx"), pptx_bytes(DECK, title="Release notes"))
    assert ex.title == "Release notes"
    assert ex.format == "pptx"
    found = sections(ex)
    assert list(found) == ["slide 1: Release notes 2025", "slide 2", "slide 3: Warranty"]
    assert found["slide 3: Warranty"] == (
        "Warranty\n"
        "Every instrument carries a two-year warranty.\nBatteries: one year.\n"
        "Item: BP-40\nPrice (EUR): 189\n"
        "Left box\nRight box\n"
        "Speaker notes:\nMention the Care plans here.")
    warranty = next(s for s in ex.sections if s.locator == "slide 3: Warranty")
    assert warranty.heading_path == ("Warranty",)
    assert ex.metadata == {"slides": 3, "date": "2025-03-14"}


def test_pptx_speaker_notes_can_be_left_out():
    ex = load_pptx(Path("deck.pptx"), pptx_bytes(DECK), include_notes=False)
    assert "Care plans" not in ex.text and "Speaker notes" not in ex.text
    assert ex.title == "Release notes 2025"  # no title in the properties: the first slide's


# XLSX ---------------------------------------------------------------------------------------

PRICES = {
    "Prices": [
        ["Batteries"],
        ["Part number", "Item", "Price (EUR)"],
        ["740-0040", "BP-40 battery", (189, "#,##0")],
        ["740-0400", "BP-400 battery", (24900, "#,##0")],
        [],
        ["Services"],
        ["Code", "Service", "Price (EUR)"],
        ["SV-KM", "Travel per kilometre", (0.65, "0.00")],
    ],
    "Dates": [["Valid from", "Valid to"], [dt.datetime(2025, 1, 1), dt.datetime(2025, 12, 31)]],
}


def test_xlsx_regions_give_sheet_locators_with_cell_ranges():
    ex = load_xlsx(Path("prices.xlsx"), xlsx_bytes(PRICES, title="Price List"))
    assert ex.title == "Price List"
    found = sections(ex)
    assert list(found) == ["sheet Prices (A1:C4)", "sheet Prices (A6:C8)", "sheet Dates (A1:B2)"]
    assert found["sheet Prices (A1:C4)"] == (
        "Batteries\n\n"
        "Part number: 740-0040\nItem: BP-40 battery\nPrice (EUR): 189\n\n"
        "Part number: 740-0400\nItem: BP-400 battery\nPrice (EUR): 24,900")
    services = found["sheet Prices (A6:C8)"]
    assert "Code: SV-KM\nService: Travel per kilometre\nPrice (EUR): 0.65" in services
    assert found["sheet Dates (A1:B2)"] == "Valid from: 2025-01-01\nValid to: 2025-12-31"
    section = next(s for s in ex.sections if s.locator == "sheet Prices (A6:C8)")
    assert section.heading_path == ("Prices", "Services")
    assert ex.metadata["sheets"] == ["Prices", "Dates"]
    assert ex.warnings == ()


def test_xlsx_table_split_by_an_empty_row_keeps_its_header():
    sheet = {"Log": [["Station", "Reading"], ["ST-1", 4], [], ["ST-2", 5]]}
    found = sections(load_xlsx(Path("log.xlsx"), xlsx_bytes(sheet)))
    assert found == {"sheet Log (A1:B2)": "Station: ST-1\nReading: 4",
                     "sheet Log (A4:B4)": "Station: ST-2\nReading: 5"}


def test_xlsx_formula_without_cached_value_is_a_warning_and_with_one_is_read():
    sheet = {"Sum": [["Item", "Price"], ["BP-40", 189], ["Twice", "=B2*2"]]}
    data = xlsx_bytes(sheet)
    ex = load_xlsx(Path("f.xlsx"), data)
    assert ex.text.endswith("Twice") and "378" not in ex.text  # a row of one cell: a note
    assert ex.warnings == (
        "sheet Sum: 1 formula cell(s) without a cached value (B3), so their results are "
        "missing; the file was saved by a program that does not calculate: open it in Excel "
        "or LibreOffice, save it, and ingest again",)
    cached = load_xlsx(Path("f.xlsx"), with_cached_value(data, "B3", "378"))
    assert "Item: Twice\nPrice: 378" in cached.text
    assert cached.warnings == ()


@pytest.mark.parametrize("value, fmt, shown", [
    (24900, "#,##0", "24,900"),
    (0.65, "0.00", "0.65"),
    (0.35, "0%", "35%"),
    (0.125, "0.0%", "12.5%"),
    (1290, '"EUR "#,##0', "EUR 1,290"),
    (5.5, "[$€-407]#,##0.00", "€5.50"),
    (1234.5, "#,##0.00 [$€-407]", "1,234.50 €"),
    (-42, "#,##0;(#,##0)", "-42"),
    (0.1 + 0.2, "General", "0.3"),
    (12345.0, "General", "12345"),
    (12345, "0.00E+00", "12345"),
])
def test_number_formats(value, fmt, shown):
    assert format_number(value, fmt) == shown


def test_cell_values_of_other_types():
    assert cell_text(True) == "TRUE"
    assert cell_text(dt.datetime(2025, 1, 1, 13, 45)) == "2025-01-01 13:45"
    assert cell_text(dt.time(7, 30)) == "07:30:00"
    assert cell_text("  padded  ") == "padded"
    assert cell_text(None) == ""


# DOCX ---------------------------------------------------------------------------------------

POLICY = [
    ("title", "Travel Policy"),
    ("h1", "1. Per diem"),
    ("p", "Staff travelling abroad receive a daily allowance for meals."),
    ("table", [["City", "Rate"], ["Lisbon", "EUR 45"], ["Tarnwick", "GBP 38"]]),
    ("h2", "1.1 Receipts"),
    ("p", "Keep every receipt for seven years."),
    ("outline1", "2. Mileage"),
    ("p", "Private cars are reimbursed per kilometre."),
]


def test_docx_headings_give_sections_and_tables_give_records():
    ex = load_docx(Path("travel.docx"), docx_bytes(POLICY))
    assert ex.title == "Travel Policy"
    assert ex.format == "docx"
    found = sections(ex)
    assert list(found) == ["§ Travel Policy", "§ 1. Per diem", "§ 1.1 Receipts", "§ 2. Mileage"]
    assert found["§ 1. Per diem"] == (
        "1. Per diem\nStaff travelling abroad receive a daily allowance for meals.\n"
        "City: Lisbon\nRate: EUR 45\n\nCity: Tarnwick\nRate: GBP 38")
    receipts = next(s for s in ex.sections if s.locator == "§ 1.1 Receipts")
    assert receipts.heading_path == ("Travel Policy", "1. Per diem", "1.1 Receipts")
    mileage = next(s for s in ex.sections if s.locator == "§ 2. Mileage")
    assert mileage.heading_path == ("Travel Policy", "2. Mileage")


def test_docx_without_text_is_an_error():
    with pytest.raises(IngestError, match=r"empty\.docx: no text could be extracted"):
        load_document(Path("empty.docx"), "empty", docx_bytes([]))
