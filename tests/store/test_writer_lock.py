"""The writer lock of an index folder, with real processes (issue 13.3): two ingests into one
index at once lost documents, and one writer's cleanup deleted the other's half-written
generation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from glassrag.errors import StoreError
from glassrag.store import EmbeddedStore
from tests.cli_helper import started
from tests.conftest import as_unprivileged, write_corpus

# a writer that holds the lock with a half-written generation until told to stop
HOLDER = """
import sys
from pathlib import Path
from glassrag.store import EmbeddedStore

with EmbeddedStore(sys.argv[1]).writing():
    (Path(sys.argv[1]) / ".tmp-gen-half-written").mkdir()
    print("holding", flush=True)
    sys.stdin.readline()
"""


def hold(idx: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(idx)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    return holder


def finish(p: subprocess.Popen) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


@pytest.mark.slow
def test_a_second_writer_names_the_holder_and_leaves_its_generation_alone(corpus: Path,
                                                                         tmp_path: Path):
    idx = tmp_path / "idx"
    holder = hold(idx)
    try:
        code, _, err = finish(started("ingest", corpus, "--index", idx, "--wait", "0.5"))
        assert code == 3, err
        assert f"{idx} is being written by another glassrag (pid {holder.pid} on " in err
        assert "waited 0.5 s" in err and "Traceback" not in err
        assert (idx / ".tmp-gen-half-written").is_dir()  # the holder's work is untouched
        assert not (idx / "CURRENT").exists()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.slow
def test_a_second_writer_waits_then_writes(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    holder = hold(idx)
    second = started("ingest", corpus, "--index", idx, "--wait", "60")
    # its first words on stderr say it waits (read as they come: a fixed sleep was too short
    # for the child to start on a loaded machine)
    assert second.stderr is not None
    first = second.stderr.readline()
    assert f"waiting up to 60 s for another writer of {idx} (pid {holder.pid}" in first, first
    assert second.poll() is None, "the second writer did not wait for the lock"
    assert holder.stdin is not None
    holder.stdin.write("done\n")
    holder.stdin.flush()
    assert holder.wait(timeout=30) == 0
    code, out, err = finish(second)
    assert code == 0, err
    assert sorted(EmbeddedStore(idx).read().documents) == ["manual", "notes", "scanner", "travel"]


@pytest.mark.slow
def test_a_killed_writer_leaves_no_lock(corpus: Path, tmp_path: Path):
    """The kernel drops a flock with its process: kill -9 cannot leave a stale lock."""
    idx = tmp_path / "idx"
    holder = hold(idx)
    holder.kill()
    holder.wait()
    code, _, err = finish(started("ingest", corpus, "--index", idx, "--wait", "0"))
    assert code == 0, err
    assert not (idx / ".tmp-gen-half-written").exists()  # a dead writer's leftovers are removed


@pytest.mark.slow
def test_two_ingests_at_once_keep_every_document(tmp_path: Path):
    """Before the lock, 9 of 13 such trials lost one ingest's documents."""
    a = write_corpus(tmp_path / "a", {f"a{i}.md": f"# Alpha {i}\n\nalpha text {i}\n" for i in range(200)})
    b = write_corpus(tmp_path / "b", {f"b{i}.md": f"# Beta {i}\n\nbeta text {i}\n" for i in range(200)})
    for trial in range(3):
        idx = tmp_path / f"idx{trial}"
        # the second waits for the first however busy the machine (a lock that times out is
        # another test's subject)
        writers = [started("ingest", a, "--index", idx, "--wait", "600"),
                   started("ingest", b, "--index", idx, "--wait", "600")]
        for w in writers:
            code, _, err = finish(w)
            assert code == 0, err
        ids = set(EmbeddedStore(idx).read().documents)
        assert ids == {f"a{i}" for i in range(200)} | {f"b{i}" for i in range(200)}, f"trial {trial}"


def test_a_store_does_not_write_over_a_generation_newer_than_it_read(index, tmp_path: Path):
    """What keeps rerank-train and calibrate (read, train, write) from undoing an ingest
    that wrote while they trained."""
    EmbeddedStore(tmp_path / "idx").write(index)
    slow = EmbeddedStore(tmp_path / "idx")
    slow.read()
    fast = EmbeddedStore(tmp_path / "idx")
    fast.read()
    fast.write(index)
    with pytest.raises(StoreError, match="changed since this command read it"):
        slow.write(index)
    slow.read()
    slow.write(index)  # having read the new generation, it may write


def test_a_first_write_killed_half_way_does_not_block_the_folder(index, tmp_path: Path):
    """A first ingest killed before CURRENT existed left `.tmp-gen-*`; the folder was then
    refused as 'not empty and not a glassrag index'."""
    (tmp_path / "idx" / ".tmp-gen-20260101-000000-abcdef").mkdir(parents=True)
    EmbeddedStore(tmp_path / "idx").write(index)
    assert EmbeddedStore(tmp_path / "idx").read().chunks == index.chunks
    assert not (tmp_path / "idx" / ".tmp-gen-20260101-000000-abcdef").exists()


@pytest.mark.slow
def test_an_index_folder_the_user_cannot_write_is_a_message():
    """Run as the unprivileged user `nobody` when the tests run as root (root writes anywhere)."""
    import shutil
    import tempfile

    as_nobody = as_unprivileged()
    shared = Path(tempfile.mkdtemp(prefix="glassrag-lock-"))
    try:
        shared.chmod(0o755)
        (shared / "closed").mkdir(mode=0o700)  # not even enterable
        (shared / "readonly").mkdir(mode=0o555)  # enterable, not writable
        for index, expected in [(shared / "closed" / "idx", "cannot be reached (Permission denied)"),
                                (shared / "readonly", "cannot take the writer lock (Permission denied)")]:
            r = subprocess.run([*as_nobody, sys.executable, "-m", "glassrag.cli", "ingest", str(shared),
                                "--index", str(index)], capture_output=True, text=True, timeout=120)
            assert r.returncode == 3, r.stderr
            assert expected in r.stderr and "Traceback" not in r.stderr
    finally:
        shutil.rmtree(shared, ignore_errors=True)
