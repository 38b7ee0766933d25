"""The reader quotes whole sentences of prose (issue 27: it quoted a hard-wrapped line's first
half, a code fence, a table header row)."""

from glassrag.lexical.analyze import Analyzer
from glassrag.read.extractive import ExtractiveReader
from glassrag.read.quotable import quotable_sentences, unquotable_lines

A = Analyzer()

TEXT = ("Strict mode is not enabled by default, because\nit slows every request down.\n\n"
        "| Office | Public holidays per year | Notes |\n|---|---|---|\n| Bern office | 9 public holidays | none |\n\n"
        "```\nstrict_mode = enable(default=True)\n```\n\n"
        "    indented code about strict mode by default\n\n"
        "- a list item about strict mode\n- another\nDone.")


def quoted(text):
    return [text[a:b] for a, b, _ in quotable_sentences(text, A)]


def test_hard_wrapped_sentences_are_joined_lists_and_closed_lines_are_not():
    got = quoted(TEXT)
    assert got[0] == "Strict mode is not enabled by default, because\nit slows every request down."
    assert "- a list item about strict mode" in got and "- another" in got
    assert quoted("One line.\nAnother line.") == ["One line.", "Another line."]
    assert quoted("Title without stop\n- item") == ["Title without stop", "- item"]
    # a heading is not glued to the sentence below it, even a long one with a number
    assert quoted("2.1 Sensor errors\nE-4107 means the tilt sensor lost calibration.") == [
        "2.1 Sensor errors", "E-4107 means the tilt sensor lost calibration."]
    assert quoted("3.4 What the operator checks before every survey shift\nThe level.")[0].startswith("3.4")
    assert len(quoted("3.4 What the operator checks before every survey shift\nThe level.")) == 2


def test_no_code_no_table_header_but_table_rows():
    got = quoted(TEXT)
    assert "| Bern office | 9 public holidays | none |" in got
    assert not any("Public holidays per year" in s or "---" in s or "enable(" in s or "```" in s
                   or "indented code" in s for s in got)
    banned = [TEXT[a:b] for a, b in unquotable_lines(TEXT)]
    assert banned == ["| Office | Public holidays per year | Notes |", "|---|---|---|", "```",
                      "strict_mode = enable(default=True)", "```", "    indented code about strict mode by default"]


def test_the_reader_quotes_the_whole_sentence_and_never_the_header():
    reader = ExtractiveReader(A, threshold=0.3)
    q = reader.read(set(A("Why is strict mode not enabled by default?")), [("c1", TEXT)])
    assert q.found and q.text == "Strict mode is not enabled by default, because\nit slows every request down."
    q = reader.read(set(A("How many public holidays per year does the office have?")), [("c1", TEXT)])
    assert q.text == "| Bern office | 9 public holidays | none |"
