"""Every document of every prepared corpus (corpora/*/docs) and of the demo, as a newcomer sees
it (issue 49): a true title, not a page label, a placeholder, a running head or a title shared
with another document of its corpus; and no extraction warning on these clean, born-digital
files (misread text is still flagged: tests/ingest/test_quality.py, bench/ocr_words.py).

Each corpus's files are read once for both tests, in memory (about 5 s a corpus on one core)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from glassrag.demo import demo_docs
from glassrag.ingest import load_document
from glassrag.ingest.titles import is_junk, tidy

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = sorted(p / "docs" for p in (ROOT / "corpora").iterdir() if (p / "docs").is_dir()) \
    if (ROOT / "corpora").is_dir() else []
CORPORA = [*FOLDERS, demo_docs()]


@pytest.fixture(scope="module", params=CORPORA, ids=[p.parent.name for p in CORPORA])
def corpus(request) -> list[tuple[Path, object, tuple[str, ...]]]:
    out = []
    for path in sorted(f for f in request.param.iterdir() if f.is_file()):
        doc, warnings = load_document(path, path.stem, path.read_bytes())
        out.append((path, doc, warnings))
    return out


def running_head(doc) -> bool:
    """Whether the title is a line of more than half of a paged document's pages."""
    pages = [doc.section_text(s) for s in doc.sections if s.locator.startswith(("page", "p. ", "PDF page"))]
    if len(pages) < 3:
        return False
    title = re.sub(r"\s+", " ", doc.title).strip().lower()
    holding = sum(any(re.sub(r"\s+", " ", ln).strip().lower() == title for ln in page.split("\n"))
                  for page in pages)
    return holding > len(pages) / 2


def test_every_title_is_a_true_title_of_its_own(corpus):
    wrong = [(p.name, d.title) for p, d, _ in corpus
             if is_junk(tidy(d.title)) or tidy(d.title) != d.title or running_head(d)]
    assert not wrong, wrong
    by_title: dict[str, list[str]] = {}
    for p, d, _ in corpus:
        by_title.setdefault(d.title.casefold(), []).append(p.name)
    assert not {t: names for t, names in by_title.items() if len(names) > 1}


def test_no_clean_document_warns(corpus):
    warned = [(p.name, w[:120]) for p, _, warnings in corpus for w in warnings]
    assert not warned, warned
