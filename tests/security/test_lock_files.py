"""Issue 51.1: a lock file planted in a shared index folder (`.writer.lock`, `lab/.runs.lock`)
as a symbolic link or a pipe is refused, never opened: the file it points to is not created,
truncated or written, and the user is told which lock file to remove."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.config import Config
from glassrag.errors import LockFileError
from glassrag.indexer import build_index
from glassrag.lab.base import LabBench
from glassrag.lab.losses import keep_run
from glassrag.store.lock import LOCK_FILE, WriterLock
from glassrag.store.safefile import open_lock_file

PRECIOUS = "the user's own file, which no index may touch\n"


@pytest.fixture
def precious(tmp_path: Path) -> Path:
    target = tmp_path / "precious.txt"
    target.write_text(PRECIOUS)
    return target


def test_ingest_refuses_a_writer_lock_that_is_a_link(tmp_path: Path, corpus: Path, precious: Path, capsys) -> None:
    index = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(index)]) == 0
    (index / LOCK_FILE).unlink(missing_ok=True)
    (index / LOCK_FILE).symlink_to(precious)
    assert main(["ingest", str(corpus), "--index", str(index)]) == 3  # a StoreError
    assert precious.read_text() == PRECIOUS  # not truncated, not written
    said = " ".join(capsys.readouterr().err.split())
    assert f"{LOCK_FILE} is a symbolic link, not a lock file glassrag made" in said
    assert "remove it" in said


def test_a_link_to_a_missing_file_is_not_created(tmp_path: Path) -> None:
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / LOCK_FILE).symlink_to(tmp_path / "made-by-the-link")
    with pytest.raises(LockFileError):
        with WriterLock(folder, wait=0):
            pass
    assert not (tmp_path / "made-by-the-link").exists()


def test_a_pipe_in_place_of_the_lock_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / LOCK_FILE)
    with pytest.raises(LockFileError, match="not a regular file"):
        with WriterLock(tmp_path, wait=0):
            pass


def test_a_folder_in_place_of_the_lock_is_refused(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).mkdir()
    with pytest.raises(LockFileError, match="not a regular file"):
        open_lock_file(tmp_path / LOCK_FILE)


def test_a_regular_lock_file_still_locks(tmp_path: Path) -> None:
    with WriterLock(tmp_path, wait=0):
        assert (tmp_path / LOCK_FILE).is_file()
        assert '"pid"' in (tmp_path / LOCK_FILE).read_text()


def _bench(corpus: Path, folder: Path) -> LabBench:
    index, _ = build_index([corpus], Config().with_overrides(retrieve={"retrievers": ["bm25"]}))
    return LabBench("runs", index, (), "", folder)


def test_the_lab_runs_lock_that_is_a_link_is_refused(corpus: Path, tmp_path: Path) -> None:
    folder = tmp_path / "index"
    (folder / "lab").mkdir(parents=True)
    (folder / "lab" / ".runs.lock").symlink_to(tmp_path / "made-by-the-link")
    said = keep_run(_bench(corpus, folder), {"id": "one", "outcomes": {}})
    assert "is a symbolic link" in said
    assert not (tmp_path / "made-by-the-link").exists()  # opened for append, it was created
    assert not (folder / "lab" / "runs.json").exists()


def test_a_lab_folder_that_is_a_link_is_not_written_through(corpus: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "lab").symlink_to(elsewhere)
    said = keep_run(_bench(corpus, folder), {"id": "one", "outcomes": {}})
    assert "is a symbolic link" in said
    assert list(elsewhere.iterdir()) == []
