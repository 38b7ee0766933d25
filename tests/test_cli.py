"""The real command line, run as a user runs it (a subprocess), with its exit codes."""

import json
import subprocess
import sys
from pathlib import Path


def glassrag(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glassrag.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_ingest_then_ask(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    r = glassrag("ingest", corpus, "--index", idx)
    assert r.returncode == 0, r.stderr
    assert "documents  4" in r.stdout.replace("  ", "  ") or "documents" in r.stdout
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx)
    assert r.returncode == 0, r.stderr
    assert "TX-200 Manual, § 2.1 Sensor errors" in r.stdout
    assert "E-4107 means the tilt sensor lost calibration." in r.stdout
    for stage in ("analyze", "bm25", "lsa", "answer"):
        assert stage in r.stdout
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--json")
    data = json.loads(r.stdout)
    assert [(t["name"], t["kind"]) for t in data["trace"]] == [
        ("analyze", "analyze"), ("bm25", "retrieve"), ("lsa", "observe"), ("answer", "select")]
    assert data["passage"]["locator"] == "§ 2.1 Sensor errors"


def test_second_ingest_reuses_unchanged_files(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    (corpus / "notes.txt").write_text("Changed notes about the charger.\n")
    (corpus / "new.md").write_text("# New\nA new page.\n")
    r = glassrag("ingest", corpus, "--index", idx)
    lines = {l.split()[0]: l.split()[1] for l in r.stdout.splitlines() if len(l.split()) == 2}
    assert (lines["added"], lines["changed"], lines["unchanged"]) == ("1", "1", "3")


def test_bad_file_is_listed_and_exit_code_says_so(corpus: Path, tmp_path: Path):
    (corpus / "broken.md").write_bytes(b"\xff\xfe\xfa not utf8" * 3 + b"\x00")
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx")
    assert r.returncode == 5
    assert "broken.md" in r.stderr
    r = glassrag("ask", "quiet hours", "--index", tmp_path / "idx")
    assert r.returncode == 0 and "quiet hours" in r.stdout


def test_errors_are_messages_not_tracebacks(corpus: Path, tmp_path: Path):
    r = glassrag("ask", "anything", "--index", tmp_path / "missing")
    assert r.returncode == 3
    assert "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert glassrag("ingest", corpus, "--index", tmp_path / "idx").returncode == 0
    r = glassrag("ask", "the of", "--index", tmp_path / "idx")
    assert r.returncode == 2 and "nothing searchable" in r.stderr
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx2", "--chunker", "magic")
    assert r.returncode == 2 and "choose one of: document, fixed, heading, recursive, sentence" in r.stderr
    assert not (tmp_path / "idx2").exists()


def test_empty_folder_writes_no_index(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    r = glassrag("ingest", tmp_path / "empty", "--index", tmp_path / "idx")
    assert r.returncode == 1 and "no index was written" in r.stderr
    assert not (tmp_path / "idx").exists()
