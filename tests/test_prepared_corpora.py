"""Every prepared corpus in the checkout (corpora/NAME) keeps the promises of issue 31: docs/
and golden.jsonl, a golden set that passes `golden check` against an index of its own
documents, at least 120 questions of which at least a quarter unanswerable, split train/test.

Each corpus is ingested once (in memory, nothing written) for all its tests: about half a
minute per corpus on one core."""

from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.golden import UNANSWERABLE_KINDS, load_golden
from glassrag.indexer import build_index
from glassrag.prepared import find_corpus, prepared_corpora

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = sorted(p for p in (ROOT / "corpora").iterdir() if p.is_dir()) if (ROOT / "corpora").is_dir() else []


@pytest.fixture(scope="module", params=FOLDERS, ids=[p.name for p in FOLDERS])
def prepared(request):
    corpus = find_corpus(str(request.param))  # a folder without docs/ or golden.jsonl fails here
    index, report = build_index([corpus.docs], Config())
    assert not report.failed and not report.skipped, (report.failed, report.skipped)
    return corpus, index


@pytest.mark.skipif(not FOLDERS, reason="no corpora/ folder (an installed package, not a checkout)")
def test_golden_check_passes_against_its_own_documents(prepared):
    corpus, index = prepared
    questions = load_golden(corpus.golden, documents=index.documents)  # GoldenError lists each bad line
    assert {q.split for q in questions} == {"train", "test"}
    assert len(questions) >= 120
    unanswerable = [q for q in questions if not q.answerable]
    assert len(unanswerable) >= 0.25 * len(questions)
    assert {q.kind for q in unanswerable} <= set(UNANSWERABLE_KINDS)
    assert all(q.answers for q in questions if q.answerable)


@pytest.mark.skipif(not FOLDERS, reason="no corpora/ folder (an installed package, not a checkout)")
def test_every_folder_is_listed_as_a_prepared_corpus():
    assert sorted(prepared_corpora(ROOT / "corpora")) == [p.name for p in FOLDERS]


def test_corpus_build_checks_every_name_before_building_and_one_index_folder_takes_one_corpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`corpus build A B` (what `serve --build` runs) builds nothing when a name is wrong, and
    --index names one folder, so it takes one corpus."""
    from glassrag.cli import main

    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # the checkout: corpora/ is here
    names = list(prepared_corpora())
    assert main(["corpus", "build", names[0], "no-such-corpus"]) != 0
    said = capsys.readouterr()
    assert "no prepared corpus 'no-such-corpus'" in said.err and "ingest" not in said.out
    assert main(["corpus", "build", *names[:2], "--index", str(tmp_path / "i")]) != 0
    assert "--index names one folder for 2 corpora" in capsys.readouterr().err
    assert not (tmp_path / "i").exists()
