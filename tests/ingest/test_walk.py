import os
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.ingest import document_ids, walk
from tests.conftest import as_unprivileged


def test_walk_finds_supported_files_and_skips_others(tmp_path: Path):
    (tmp_path / "a.md").write_text("# A\ntext")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("b text")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.md").write_text("# H")
    found = walk([tmp_path])
    assert [p.name for p, _ in found.files] == ["a.md", "b.txt"]
    assert found.skipped == [(str(tmp_path / "image.png"), "unsupported type .png")]


def test_symlink_loop_is_reported_not_followed(tmp_path: Path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "x.md").write_text("# X\nx")
    os.symlink(tmp_path, tmp_path / "d" / "loop")
    found = walk([tmp_path])
    assert [p.name for p, _ in found.files] == ["x.md"]
    assert any("symlink loop" in reason for _, reason in found.skipped)


def test_ids_are_relative_paths_and_collisions_keep_extension(tmp_path: Path):
    files = [(tmp_path / "guide.md", tmp_path), (tmp_path / "guide.txt", tmp_path),
             (tmp_path / "sub" / "x.md", tmp_path)]
    assert document_ids(files) == ["guide.md", "guide.txt", "sub/x"]


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path):
    (tmp_path / "good.md").write_text("# Good\nThe good file.")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "with space ü.md").write_text("# Ünïcode\nA path with spaces.")
    index, report = build_index([tmp_path], Config().with_overrides(lsa={"dim": 2}))
    assert sorted(index.documents) == ["good", "with space ü"]
    failed = {Path(e.path).name: e.reason for e in report.failed}
    assert failed == {"empty.md": "empty file (0 bytes)",
                      "latin1.txt": "not UTF-8 text (bad byte at offset 3)"}


def test_missing_path_is_a_problem_not_a_crash(tmp_path: Path):
    index, report = build_index([tmp_path / "nope"], Config())
    assert report.failed[0].reason == "no such file or folder"
    assert index.chunks == []


def test_size_limit_names_the_size(tmp_path: Path):
    """Sizes are counted in the unit of --max-mb, 1024 × 1024 bytes."""
    (tmp_path / "big.txt").write_text("word " * (3 * 1024 * 1024 // 10))
    _, report = build_index([tmp_path], Config(), max_bytes=1024 * 1024)
    assert report.failed[0].reason == "too large: 1.5 MB, the limit is 1 MB"


def non_utf8_folder(tmp_path: Path) -> Path:
    """d/caf\\xe9.md (a Latin-1 name on disk) beside d/ok.md."""
    folder = tmp_path / "d"
    folder.mkdir()
    with open(os.fsencode(folder) + b"/caf\xe9.md", "wb") as f:
        f.write(b"# x\n\naardvark\n")
    (folder / "ok.md").write_text("# Ok\n\nzebra\n")
    return folder


def test_a_file_name_that_is_not_utf8_is_a_bad_file_and_the_rest_is_ingested(tmp_path: Path):
    """Issue 13.1: `caf\\xe9.md` (Latin-1 on disk) aborted the whole ingest in content_hash."""
    folder = non_utf8_folder(tmp_path)
    index, report = build_index([folder], Config().with_overrides(lsa={"dim": 2}))
    assert sorted(index.documents) == ["ok"]
    assert [(e.path, e.reason) for e in report.failed] == [
        (f"{folder}/caf\N{REPLACEMENT CHARACTER}.md", "file name is not valid UTF-8")]
    # the same file named directly on the command line
    found = walk([Path(os.fsdecode(os.fsencode(folder) + b"/caf\xe9.md"))])
    assert found.files == [] and found.problems[0].path.endswith("caf\N{REPLACEMENT CHARACTER}.md")


@pytest.mark.slow
def test_cli_reports_a_non_utf8_file_name_and_writes_the_index(tmp_path: Path):
    import subprocess
    import sys

    folder = non_utf8_folder(tmp_path)
    r = subprocess.run([sys.executable, "-m", "glassrag.cli", "ingest", str(folder), "--index",
                        str(tmp_path / "idx")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 5, r.stderr
    assert "Traceback" not in r.stderr
    assert "caf\N{REPLACEMENT CHARACTER}.md: file name is not valid UTF-8" in r.stderr
    assert "documents  1" in r.stdout


@pytest.mark.slow
def test_a_folder_that_cannot_be_listed_is_in_the_report(tmp_path: Path):
    """Issue 13.7: an unreadable sub-folder was skipped without a word. Root reads any
    folder, so the ingest runs as the unprivileged user `nobody` when the tests run as root."""
    import shutil
    import subprocess
    import sys
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="glassrag-perm-"))
    try:
        shared.chmod(0o777)
        (shared / "d" / "locked").mkdir(parents=True)
        (shared / "d" / "a.md").write_text("# A\n\nalpha\n")
        (shared / "d" / "locked" / "b.md").write_text("# B\n\nbeta\n")
        (shared / "d").chmod(0o777)
        (shared / "d" / "a.md").chmod(0o666)
        (shared / "d" / "locked").chmod(0)
        as_nobody = as_unprivileged()
        r = subprocess.run([*as_nobody, sys.executable, "-m", "glassrag.cli", "ingest",
                            str(shared / "d"), "--index", str(shared / "idx")],
                           capture_output=True, text=True, timeout=120, cwd=shared)
        assert r.returncode == 5, r.stderr
        assert f"{shared / 'd' / 'locked'}: cannot read folder: Permission denied" in r.stderr
        assert "documents  1" in r.stdout and "failed     1" in r.stdout
    finally:
        (shared / "d" / "locked").chmod(0o755)
        shutil.rmtree(shared, ignore_errors=True)
