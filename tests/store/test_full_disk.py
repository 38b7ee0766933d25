"""A full or read-only disk (issue 28, item 7): ingest, eval --save / --out, rerank-train and
calibrate end in a message and exit code 7, leave no partial or temporary file, and the
previous index answers as before.

The disk is real: a small tmpfs mounted for the test (needs root, as the test machine is;
skipped otherwise), filled to the last byte, or remounted read-only. One test without root
simulates ENOSPC by a write that stops half way."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from glassrag.demo import demo_docs, demo_golden
from tests.cli_helper import glassrag

DISK_FULL = 7


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """An empty 48 MB tmpfs, unmounted after the test."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace')}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> None:
    """Write a filler file until the file system has not one byte left."""
    with open(folder / "filler", "wb", buffering=0) as f:
        block = b"\0" * 65536
        while True:
            try:
                f.write(block)
            except OSError as err:
                assert err.errno == errno.ENOSPC
                if len(block) == 1:
                    return
                block = block[: len(block) // 2]


def leftovers(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".tmp" in p.name)


def answer_of(index: Path) -> str:
    """The passages the index answers with (without the timings)."""
    done = glassrag("ask", "How long is the probation period?", "--index", index, "--json")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    return json.dumps([answer["passage"], answer["also_found"], answer["declined"]])


def assert_disk_message(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == DISK_FULL, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and words in done.stderr, done.stderr


@pytest.mark.slow
def test_a_full_disk_at_every_write_leaves_the_index_and_no_partial_file(disk: Path, tmp_path: Path):
    docs = shutil.copytree(demo_docs(), tmp_path / "docs")
    index = disk / "index"
    assert glassrag("ingest", docs, "--index", index).returncode == 0
    before = answer_of(index)
    generation = (index / "CURRENT").read_text()
    fill(disk)
    (docs / "new.md").write_text("# New\n\n" + "A new handbook page about parking permits. " * 2000)
    for args in (["ingest", docs, "--index", index],
                 ["eval", "--index", index, "--golden", demo_golden(), "--save", "full"],
                 ["eval", "--index", index, "--golden", demo_golden(), "--out", disk / "run.json"],
                 ["rerank-train", "--index", index, "--golden", demo_golden()],
                 ["calibrate", "--index", index, "--golden", demo_golden()]):
        assert_disk_message(glassrag(*args), "the disk is full")
        assert leftovers(disk) == [], args
        assert not (disk / "run.json").exists() and not (index / "runs" / "full.json").exists()
        assert (index / "CURRENT").read_text() == generation and answer_of(index) == before


@pytest.mark.slow
def test_a_read_only_disk_is_named_and_the_index_answers_as_before(disk: Path, tmp_path: Path):
    index = disk / "index"
    assert glassrag("ingest", demo_docs(), "--index", index).returncode == 0
    before = answer_of(index)
    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    done = glassrag("eval", "--index", index, "--golden", demo_golden(), "--save", "ro")
    assert_disk_message(done, "read-only")
    assert leftovers(disk) == [] and answer_of(index) == before


def test_a_write_that_stops_half_way_leaves_no_run_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Without root: ENOSPC simulated by a file that writes half and raises (the run file is
    written through store/safefile.py's replace_file, which opens its temporary file with os.fdopen)."""
    import io

    from glassrag.errors import DiskError
    from glassrag.evaluate import runs
    from glassrag.store import safefile

    target = tmp_path / "runs" / "x.json"
    target.parent.mkdir()
    target.write_text("the previous run")

    class Half(io.FileIO):
        def write(self, data) -> int:  # type: ignore[override]
            super().write(bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, "No space left on device", self.name)

    class FakeRun:
        def to_dict(self) -> dict:
            return {"format": "glassrag-run", "questions": list(range(100))}

    monkeypatch.setattr(safefile.os, "fdopen", lambda fd, mode: Half(fd, "wb"))
    with pytest.raises(DiskError) as err:
        runs.write_run_file(FakeRun(), target)  # type: ignore[arg-type]
    assert err.value.exit_code == DISK_FULL and "the disk is full" in err.value.problem
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.json"]
    assert target.read_text() == "the previous run"
