"""--max-mb bounds the file, --max-text-mb and --max-text-ratio the text it gives (issue 28,
item 13): a small DOCX that expands to megabytes of text is skipped with a message naming
it, as soon as its text passes the limit, and the other files are ingested."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.ingest import MB, text_limit
from tests.cli_helper import glassrag
from tests.ingest.build_files import docx_bytes

SOME_FAILED = 5


def test_the_limit_is_the_ratio_times_the_file_at_least_1_mb_at_most_max_text_mb():
    assert text_limit(10_000) == MB  # 20 × 10 kB is below the 1 MB floor
    assert text_limit(2 * MB) == 40 * MB
    assert text_limit(10 * MB) == 100 * MB  # 200 MB capped at --max-text-mb
    assert text_limit(2 * MB, max_text_mb=30) == 30 * MB
    assert text_limit(2 * MB, max_text_ratio=3) == 6 * MB


@pytest.mark.slow
def test_a_docx_that_expands_far_beyond_its_size_is_skipped_and_the_rest_ingested(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraph = "Repeated words compress well inside a DOCX archive. " * 20  # 1,060 characters
    bomb = docx_bytes([("h1", "Bomb"), *[("p", paragraph)] * 3000])  # about 3.2 MB of text
    (docs / "bomb.docx").write_bytes(bomb)
    assert len(bomb) < MB / 20  # so its limit is the 1 MB floor
    (docs / "fine.md").write_text("# Refunds\n\nRefunds are paid within ten days.\n")
    index = tmp_path / "index"
    done = glassrag("ingest", docs, "--index", index)
    assert done.returncode == SOME_FAILED and "Traceback" not in done.stderr, done.stderr
    line = next(l for l in done.stderr.splitlines() if "bomb.docx" in l)
    assert "its text is too large: over 1.0 MB of text" in line  # stopped at the limit, not at 3.2 MB
    assert "--max-text-mb or --max-text-ratio" in done.stderr
    asked = glassrag("ask", "refunds paid", "--index", index)
    assert asked.returncode == 0 and "ten days" in asked.stdout
    allowed = glassrag("ingest", docs, "--index", index, "--max-text-ratio", "1000")
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.slow
def test_max_text_mb_bounds_a_plain_text_file_too(tmp_path: Path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.txt").write_text("A line of plain text about nothing much.\n" * 40_000)  # 1.6 MB
    (docs / "small.txt").write_text("Small and fine.\n")
    done = glassrag("ingest", docs, "--index", tmp_path / "index", "--max-text-mb", "1")
    assert done.returncode == SOME_FAILED and "big.txt" in done.stderr and "text is too large" in done.stderr
    assert "small.txt" not in done.stderr
