"""The figures the README and the documentation pages state stay true where they now live.

The test count stays near the suite's size (issue 27: the README said about 880 tests in about
4 minutes when the suite held 1,209 and ran 15-17 minutes). Since issue 49 moved the README's
long sections into docs/, each figure is followed to its page: the stage table to
docs/results.md (what `make bench-check` re-measures), the README's headline table to the same
page, so the two copies cannot drift apart."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RESULTS = ROOT / "docs" / "results.md"


def test_counts_said(tmp_path):
    """Every 'runs the suite: about N tests' in the README and the pages is found, with its page."""
    page = tmp_path / "page.md"
    page.write_text("`make test` ... runs the suite: about 2,090 tests, in 11 to 40 minutes\n")
    assert counts_said([page]) == [(page, 2090)]


def counts_said(pages: list[Path]) -> list[tuple[Path, int]]:
    return [(p, int(n.replace(",", ""))) for p in pages
            for n in re.findall(r"runs the suite: about ([\d,]+) tests", p.read_text(encoding="utf-8"))]


@pytest.mark.slow  # it collects the whole suite in a separate pytest process
def test_the_pages_count_the_tests_within_ten_percent():
    said = counts_said(PAGES)
    assert any(p.name == "README.md" for p, _ in said), "the README no longer says how many tests the suite runs"
    assert any(p.parent.name == "docs" for p, _ in said), "no page of docs/ says how many tests the suite runs"
    r = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "tests"],
                       capture_output=True, text=True, cwd=ROOT, timeout=600)
    collected = int(re.search(r"(\d+) tests? collected", r.stdout).group(1))
    for page, count in said:
        assert abs(count - collected) <= 0.1 * collected, (page.name, count, collected)


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_the_stage_table_on_its_page_is_the_committed_result():
    """bench/demo_stages.py's committed table is on docs/results.md, row for row (scripts/bench_check.py
    compares a fresh run with the same page)."""
    committed = table_rows((ROOT / "bench" / "results" / "demo_stages.md").read_text(encoding="utf-8"))
    shown = RESULTS.read_text(encoding="utf-8").splitlines()
    assert len(committed) >= 6
    assert [row for row in committed if row not in shown] == []


def test_the_readme_headline_table_is_the_one_on_the_results_page():
    """The README's one table of figures, with its command, is a copy of docs/results.md's."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = table_rows(readme)
    assert len(rows) >= 8, "the README lost its table of headline figures"
    assert "glassrag eval --index .glassrag/demo --golden src/glassrag/data/demo/golden.jsonl --split test" in readme
    shown = RESULTS.read_text(encoding="utf-8").splitlines()
    assert [row for row in rows if row not in shown] == []
