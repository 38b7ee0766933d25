"""An evaluation that measures nothing fails (issue 28, item 11): qrels that grade documents
the index lacks, a BEIR folder without qrels, a split without questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helper import glassrag

# every test here starts glassrag as a separate process (tests/cli_helper.py)
pytestmark = pytest.mark.slow

GOLDEN_INVALID = 4


def beir(folder: Path, qrels: str | None, docs: tuple[str, ...] = ("d1", "d2")) -> Path:
    folder.mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": d, "title": f"Doc {d}", "text": f"Document {d} is about refunds number {d}."}) + "\n"
        for d in docs))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "refunds d1"}) + "\n"
                                          + json.dumps({"_id": "q2", "text": "refunds d2"}) + "\n")
    if qrels is not None:
        (folder / "qrels").mkdir()
        (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


def test_qrels_that_grade_documents_the_index_lacks_fail_the_evaluation(tmp_path: Path):
    index = tmp_path / "index"
    assert glassrag("ingest", beir(tmp_path / "own", "q1\td1\t1\nq2\td2\t1\n"), "--index", index).returncode == 0
    good = glassrag("eval", "--index", index, "--golden", tmp_path / "own")
    assert good.returncode == 0, good.stderr
    other = beir(tmp_path / "other", "q1\tx1\t1\nq2\tx2\t1\n", docs=("x1", "x2"))
    done = glassrag("eval", "--index", index, "--golden", other)
    assert done.returncode == GOLDEN_INVALID and "Traceback" not in done.stderr, done.stderr
    assert "grade 2 documents the index does not hold" in done.stderr and "'x1'" in done.stderr
    assert "hit@5" not in done.stdout
    # documents at grade 0 may be absent (the abstention variant removes them on purpose)
    abstain = beir(tmp_path / "abstain", "q1\td1\t1\nq2\tx2\t0\n")
    assert glassrag("eval", "--index", index, "--golden", abstain).returncode == 0


def test_golden_check_of_a_beir_folder_without_qrels_fails(tmp_path: Path):
    done = glassrag("golden", "check", beir(tmp_path / "noqrels", None))
    assert done.returncode == GOLDEN_INVALID and "no qrels" in done.stderr, (done.stdout, done.stderr)
    assert "all valid" not in done.stdout


def test_a_split_without_questions_fails_the_evaluation(tmp_path: Path):
    index = tmp_path / "index"
    assert glassrag("ingest", beir(tmp_path / "own", "q1\td1\t1\n"), "--index", index).returncode == 0
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"id": "g1", "question": "refunds d1", "split": "train", "answerable": True,
                                  "answers": [{"doc": "d1"}]}) + "\n")
    done = glassrag("eval", "--index", index, "--golden", golden, "--split", "test")
    assert done.returncode == GOLDEN_INVALID and "no questions in the test split" in done.stderr, done.stderr
