"""Re-ingesting PDF, PPTX, XLSX and DOCX files: unchanged ones are reused by content hash,
a changed one is chunked again, a deleted one goes only with prune."""

from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.indexer import build_index
from tests.ingest.build_files import docx_bytes, pdf_bytes, pptx_bytes, xlsx_bytes

CONFIG = Config().with_overrides(lsa={"dim": 2})


def prices(bp40: int) -> bytes:
    return xlsx_bytes({"Batteries": [["Battery", "Price (EUR)"], ["BP-40", (bp40, "#,##0")],
                                     ["BP-400", (465, "#,##0")]]})


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "safety.pdf").write_bytes(pdf_bytes([
        ["Lifting", "No one should lift more than 20 kg alone."],
        ["Weather", "Stop work when thunder is near."]]))
    (root / "deck.pptx").write_bytes(pptx_bytes([{"title": "Warranty", "body": ["Two years."]}]))
    (root / "prices.xlsx").write_bytes(prices(189))
    (root / "policy.docx").write_bytes(docx_bytes([("h1", "Per diem"), ("p", "EUR 45 in Lisbon.")]))
    return root


def chunks_of(index, doc_id):
    return [c for c in index.chunks if c.doc_id == doc_id]


def test_reingest_counts_unchanged_and_reuses_chunks(folder: Path):
    first, report = build_index([folder], CONFIG)
    assert sorted(report.added) == ["deck", "policy", "prices", "safety"]
    again, report = build_index([folder], CONFIG, previous=first)
    assert sorted(report.unchanged) == ["deck", "policy", "prices", "safety"]
    assert report.added == report.changed == report.removed == []
    assert [c.id for c in again.chunks] == [c.id for c in first.chunks]


def test_changed_file_is_chunked_again(folder: Path):
    first, _ = build_index([folder], CONFIG)
    (folder / "prices.xlsx").write_bytes(prices(199))
    second, report = build_index([folder], CONFIG, previous=first)
    assert report.changed == ["prices"]
    assert sorted(report.unchanged) == ["deck", "policy", "safety"]
    new = " ".join(c.text for c in chunks_of(second, "prices"))
    assert "Battery: BP-40\nPrice (EUR): 199" in new and "189" not in new
    assert chunks_of(second, "prices")[0].locator == "sheet Batteries (A1:B3)"
    for doc_id in ("deck", "policy", "safety"):
        assert chunks_of(second, doc_id) == chunks_of(first, doc_id)


def test_deleted_file_is_removed_only_with_prune(folder: Path):
    first, _ = build_index([folder], CONFIG)
    (folder / "deck.pptx").unlink()
    kept, report = build_index([folder], CONFIG, previous=first)
    assert "deck" in kept.documents and report.removed == []
    assert [c.locator for c in chunks_of(kept, "deck")] == ["slide 1: Warranty"]
    pruned, report = build_index([folder], CONFIG, previous=kept, prune=True)
    assert report.removed == ["deck"]
    assert "deck" not in pruned.documents and chunks_of(pruned, "deck") == []
    assert sorted(report.unchanged) == ["policy", "prices", "safety"]
