"""Every long command shows its progress on a terminal and says nothing of it in a pipe (issue
49, item 4): the commands run as a user runs them, with stderr on a pseudo-terminal, then on a
pipe (tests/cli_helper.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from glassrag.evaluate.offtopic import offtopic_questions
from tests.cli_helper import glassrag, on_terminal
from tests.test_cli import GOLDEN

pytestmark = pytest.mark.slow  # each test starts glassrag as a separate process

COUNT = re.compile(r"(\d+)/(\d+)")  # rich's MofNCompleteColumn: done/total


def counts(screen: str, label: str) -> list[tuple[int, int]]:
    """Every done/total drawn on a line of the bar named `label`."""
    lines = re.split(r"[\r\n]", screen)
    return [(int(a), int(b)) for line in lines if label in line for a, b in COUNT.findall(line)]


def test_eval_counts_the_off_topic_questions_on_a_terminal_and_is_quiet_in_a_pipe(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    code, screen, stdout = on_terminal("eval", "--index", idx, "--golden", golden, "--no-calibrate")
    assert code == 0, screen
    # the golden set's 3 questions, then the 148 bundled off-topic ones the gate is measured on:
    # the bar ends at their sum (before, it stood at 3/3 while the off-topic ones ran)
    total = len(GOLDEN) + len(offtopic_questions("test"))
    drawn = counts(screen, "evaluating")
    assert drawn and {t for _, t in drawn} == {total} and max(d for d, _ in drawn) == total
    assert "every stage" in stdout and "evaluating" not in stdout  # the bar is stderr's alone
    piped = glassrag("eval", "--index", idx, "--golden", golden, "--no-calibrate")
    assert piped.returncode == 0 and "evaluating" not in piped.stderr and "\x1b[" not in piped.stderr
