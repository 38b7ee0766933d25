"""`glassrag documents` lists what labels may name (issue 27: the user read /documents/ID.json),
and two files sharing a stem keep their extension in their ids, as docs/golden-format.md says."""

import json
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.errors import ConfigError


@pytest.fixture
def built(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    (docs / "office").mkdir(parents=True)
    (docs / "office" / "test.md").write_text("# Leave\n\nTwenty days a year.\n\n## Carry-over\n\nFive days.\n")
    (docs / "office" / "test.txt").write_text("Plain text notes.\n")
    (docs / "manual.md").write_text("# The [TX-200](https://example.org) manual\n\nE-4107 is a tilt error.\n")
    assert main(["ingest", str(docs), "--index", str(tmp_path / "idx")]) == 0
    return tmp_path / "idx"


def test_lists_ids_titles_locators_and_quality(built: Path, capsys):
    capsys.readouterr()
    assert main(["documents", "--index", str(built), "--sections", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert set(rows) == {"manual", "office/test.md", "office/test.txt"}
    assert rows["manual"]["title"] == "The TX-200 manual"
    assert rows["manual"]["locators"] == ["§ The TX-200 manual"]
    assert rows["office/test.md"]["locators"] == ["§ Leave", "§ Carry-over"]
    assert rows["office/test.md"]["quality"] == "ok" and rows["manual"]["format"] == "markdown"


def test_the_table_and_an_unknown_id(built: Path, capsys):
    assert main(["documents", "--index", str(built)]) == 0
    shown = capsys.readouterr().out
    assert "office/test.md" in shown and "The TX-200 manual" in shown and "§ Leave" not in shown
    assert main(["documents", "office/test.md", "--index", str(built)]) == 0
    assert "§ Carry-over" in capsys.readouterr().out
    from glassrag.cli.documents import document_listing
    from glassrag.store import open_store

    with pytest.raises(ConfigError, match="did you mean 'manual'"):
        document_listing(open_store(str(built)).read().documents, {}, ["manuals"], False)


def test_golden_format_says_what_ingest_does():
    text = (Path(__file__).resolve().parent.parent / "docs" / "golden-format.md").read_text()
    assert "keep their extension" in text and "glassrag documents" in text
