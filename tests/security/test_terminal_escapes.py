"""Issue 28.12: no escape sequence from a file name or a document reaches the terminal: ingest's
failure lines and ask's answer show ESC as the text \\x1b instead of sending it."""

from __future__ import annotations

from pathlib import Path

from glassrag.cli import main
from glassrag.errors import visible_lines

ESC = "\x1b]0;owned\x07\x1b[2J"  # set the window title, clear the screen


def test_visible_lines_keeps_lines_and_shows_escapes() -> None:
    assert visible_lines("a\n\tb" + ESC) == "a\n\tb\\x1b]0;owned\\x07\\x1b[2J"


def test_a_file_name_with_escapes_is_shown_not_obeyed(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fine.md").write_text("# Fine\n\nThe fleet server updates firmware at night.\n")
    (docs / f"bad{ESC}.pdf").write_bytes(b"not a pdf at all")
    assert main(["ingest", str(docs), "--index", str(tmp_path / "index")]) != 0  # some files failed
    said = capsys.readouterr()
    assert "failed" in said.err and "bad\\x1b]0;owned\\x07" in said.err
    assert "\x1b" not in said.out + said.err


def test_document_text_with_escapes_is_shown_not_obeyed(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"n{ESC}otes.txt").write_text(f"The fleet server{ESC} updates firmware during quiet hours.\n")
    assert main(["ingest", str(docs), "--index", str(tmp_path / "index")]) == 0
    capsys.readouterr()
    assert main(["ask", f"When does the fleet server update firmware?{ESC}", "--index",
                 str(tmp_path / "index")]) == 0
    said = capsys.readouterr()
    assert "firmware" in said.out and "\\x1b[2J" in said.out
    assert "\x1b" not in said.out + said.err
