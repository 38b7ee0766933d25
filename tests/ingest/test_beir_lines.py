"""Bad BEIR corpus lines (issue 28, item 6): each is reported with the file and line and
skipped, the rest ingested, no traceback; an id with a NUL is refused, not stored as another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helper import glassrag

# every test here starts glassrag as a separate process (tests/cli_helper.py)
pytestmark = pytest.mark.slow

BAD = {  # line -> the words of its message
    b'{"_id": "deep", "text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}": "nested too deep",
    b'{"_id": ' + b"9" * 5000 + b', "text": "a long id"}': "over 4,300 digits",
    '{"_id": "lat", "text": "caf\u00e9 au lait"}'.encode("latin-1"): "not UTF-8 (byte 0xe9",
    b'{"_id": "sur", "text": "a lone \\ud800 surrogate"}': "'text' holds a lone surrogate",
    json.dumps({"_id": "lst", "title": ["a", "list"], "text": "listed"}).encode(): "'title' should be a string, not a JSON list",
    json.dumps({"_id": "obj", "text": {"an": "object"}}).encode(): "'text' should be a string, not a JSON object",
    json.dumps({"_id": "d2\u0000", "text": "Another d2, with a NUL."}).encode(): "holds a control character",
    json.dumps({"_id": ["d3"], "text": "An id that is a list."}).encode(): "'_id' should be a non-empty string",
}


def test_each_bad_corpus_line_is_named_and_skipped_and_the_rest_ingested(tmp_path: Path):
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    good = [json.dumps({"_id": "d1", "title": "Probation", "text": "The probation period lasts six months."}).encode(),
            json.dumps({"_id": "d2", "text": "Refunds are paid within ten days."}).encode()]
    lines = [good[0], *BAD, good[1]]
    (folder / "corpus.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "How long is probation?"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    index = tmp_path / "index"
    done = glassrag("ingest", folder, "--index", index)
    assert "Traceback" not in done.stderr and done.returncode == 5, done.stderr  # some files failed
    for n, (line, words) in enumerate(BAD.items(), 2):
        message = next(m for m in done.stderr.splitlines() if f"corpus.jsonl:{n}:" in m)
        assert words in message, (n, message)
    assert "documents  2" in done.stdout
    for question, doc in (("refunds paid", "Refunds are paid"), ("probation period", "probation period lasts")):
        asked = glassrag("ask", question, "--index", index)
        assert asked.returncode == 0 and doc in asked.stdout and "Traceback" not in asked.stderr, asked.stderr
    assert "'list'" not in glassrag("ask", "listed", "--index", index).stdout  # no Python repr indexed
