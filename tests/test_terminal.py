"""What `glassrag ask` writes without rich (cli/terminal.py): styles only on a real terminal (a
pty here), plain text to a pipe, the route table's columns, and no escape of a document's."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from glassrag.cli import terminal

SGR = re.compile(r"\x1b\[[0-9;]*m")  # the only escapes terminal.py sends: bold, dim, yellow, reset


@pytest.fixture
def tty():
    """A real terminal: the far end of a pseudo-terminal, 80 columns wide."""
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    stream = open(slave, "w", encoding="utf-8", closefd=True)
    yield stream, master
    stream.close()
    os.close(master)


def read_all(master: int) -> str:
    import select

    got = b""
    while select.select([master], [], [], 0.2)[0]:
        got += os.read(master, 65536)
    return got.decode("utf-8").replace("\r\n", "\n")


def test_a_pipe_gets_plain_text(tmp_path: Path):
    with open(tmp_path / "out.txt", "w", encoding="utf-8") as f:
        terminal.write(("Q: ", "bold"), "what?", ("  dim", "dim"), stream=f)
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "Q: what?  dim\n"


def test_a_terminal_gets_the_styles(tty, monkeypatch):
    stream, master = tty
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    terminal.write(("Q: ", "bold"), "what? ", ("no", "yellow"), stream=stream)
    stream.flush()
    assert read_all(master) == "\x1b[1mQ: \x1b[0mwhat? \x1b[33mno\x1b[0m\n"
    monkeypatch.setenv("NO_COLOR", "1")
    terminal.write(("Q: ", "bold"), "what?", stream=stream)
    stream.flush()
    assert read_all(master) == "Q: what?\n"


def test_the_table_wraps_only_its_wrap_column_to_the_width(tmp_path: Path):
    rows = [("bm25", "439", "90", "a:1, b:2"), ("gate", "90", "90", " ".join(["word"] * 60))]
    with open(tmp_path / "t.txt", "w", encoding="utf-8") as f:
        terminal.table(("stage", "in", "out", "top hits"), rows, wrap=3, stream=f)
    lines = (tmp_path / "t.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].split() == ["stage", "in", "out", "top", "hits"]
    assert lines[1].split() == ["bm25", "439", "90", "a:1,", "b:2"]
    assert lines[2].startswith(" gate   90   90   word")  # columns as wide as their widest cell
    assert max(len(line) for line in lines) == terminal.PIPE_WIDTH  # 140 for a pipe, as the console had
    # the long cell went on over further lines, in its own column, the others blank there
    wrapped = lines[2:]
    assert len(wrapped) == 3 and all(line[:18].strip() == "" for line in wrapped[1:])
    assert sum(line.split().count("word") for line in wrapped) == 60


def test_a_terminal_is_as_wide_as_it_says(tty, monkeypatch):
    stream, master = tty
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal.width(stream) == 80
    monkeypatch.setenv("COLUMNS", "30")
    assert terminal.width(stream) == 30
    rows = [("gate", "90", "90", " ".join(["word"] * 20))]
    monkeypatch.setenv("NO_COLOR", "1")
    terminal.table(("stage", "in", "out", "top hits"), rows, wrap=3, stream=stream)
    stream.flush()
    lines = read_all(master).splitlines()
    # stage 5, in 2, out 3, each with two spaces after it, and a space at each edge: 30 columns
    # would leave the wrapped one 12; it gets NARROWEST's 20 instead
    assert {len(line) for line in lines} == {1 + 5 + 2 + 2 + 2 + 3 + 2 + terminal.NARROWEST + 1}
    assert sum(line.split().count("word") for line in lines) == 20
    with open(os.devnull, "w") as devnull:
        assert terminal.width(devnull) == terminal.PIPE_WIDTH


@pytest.mark.slow
def test_ask_on_a_terminal_styles_its_answer_and_sends_no_escape_of_a_document(tmp_path: Path):
    """The whole command with its output on a pty: bold and the route's header, and a document's
    ESC shown as the text \\x1b (issue 28.12), never sent."""
    import pty

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.txt").write_text("The fleet server\x1b[2J updates firmware during quiet hours.\n")
    subprocess.run([sys.executable, "-m", "glassrag.cli", "ingest", str(docs), "--index", str(tmp_path / "i")],
                   check=True, capture_output=True)
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"TERM": "xterm"}
    child = subprocess.Popen([sys.executable, "-m", "glassrag.cli", "ask", "When does the fleet server update firmware?",
                              "--index", str(tmp_path / "i")], stdout=slave, stderr=subprocess.PIPE, env=env)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        got += chunk
    assert child.wait(timeout=120) == 0, child.stderr.read()
    os.close(master)
    text = got.decode("utf-8")
    assert "\x1b[1mQ: \x1b[0m" in text and "\x1b[1m stage" in text and "\\x1b[2J" in text
    assert "\x1b" not in SGR.sub("", text)


def test_the_table_on_a_terminal_heads_in_bold_keeps_identifiers_whole_and_blank_cells_blank(tty, monkeypatch):
    stream, master = tty
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("COLUMNS", "35")  # the notes column gets 35 - 11 - 2 = 22
    notes = "aaaa returns-policy-2023 bbbb " * 3  # a cut at a hyphen would fill the lines better
    terminal.table(("stage", "in", "top hits"), [("read", "11", ""), ("gate", "9", notes.strip())], wrap=2,
                   stream=stream)
    stream.flush()
    lines = read_all(master).splitlines()
    # the header bold and left-aligned: "in" padded on the right to its column's 2, "stage" to 5
    assert lines[0] == "\x1b[1m stage  in  top hits" + " " * (22 - 8) + " \x1b[0m"
    assert lines[1].rstrip() == " read   11"  # an empty cell stays empty
    words = " ".join(line[12:].strip() for line in lines[2:]).split()
    assert words == notes.split()  # a document's name never cut at its hyphens


def test_dumb_terminals_and_streams_without_isatty_get_no_escapes(tty, monkeypatch):
    stream, _ = tty
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")
    assert not terminal.styled(stream)
    monkeypatch.setenv("TERM", "xterm")
    assert terminal.styled(stream)
    assert not terminal.styled(object())  # type: ignore[arg-type]
