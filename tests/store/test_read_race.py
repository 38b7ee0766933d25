"""A reader that loses the race with a writer (issue 28, item 8): the writer made a new
generation current and deleted the one the reader was opening. The reader reads CURRENT
again, once, and gets the new index; it never advises rebuilding a healthy index."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from glassrag.errors import StoreError
from glassrag.store import EmbeddedStore


def test_a_generation_deleted_while_it_is_opened_is_read_again_from_current(index, tmp_path: Path, monkeypatch):
    folder = tmp_path / "idx"
    EmbeddedStore(folder).write(index)
    first = (folder / "CURRENT").read_text().strip()
    real = EmbeddedStore._read_generation
    calls: list[str] = []

    def racing(self: EmbeddedStore, generation: Path, manifest: dict):
        calls.append(generation.name)
        if len(calls) == 1:  # the writer wins here: a new generation, the old one deleted
            EmbeddedStore(folder).write(index)
        return real(self, generation, manifest)

    monkeypatch.setattr(EmbeddedStore, "_read_generation", racing)
    loaded = EmbeddedStore(folder).read()
    now = (folder / "CURRENT").read_text().strip()
    assert calls == [first, now] and now != first and not (folder / first).exists()
    assert loaded.documents == index.documents and loaded.stored.folder == folder / now


def test_damage_with_current_unchanged_still_says_rebuild(index, tmp_path: Path):
    folder = tmp_path / "idx"
    EmbeddedStore(folder).write(index)
    generation = folder / (folder / "CURRENT").read_text().strip()
    (generation / "lexical" / "vocab.json").write_text("[not json")
    with pytest.raises(StoreError, match="damaged") as err:
        EmbeddedStore(folder).read()
    assert "rebuild" in err.value.hint


def test_reads_during_rewrites_never_fail(index, tmp_path: Path):
    """Many reads while a writer swaps generations back to back: none is told the index is
    damaged (a read that overlaps two swaps is told to run again, not to rebuild)."""
    folder = tmp_path / "idx"
    EmbeddedStore(folder).write(index)
    done = threading.Event()
    failures: list[str] = []

    def write() -> None:
        for _ in range(15):
            EmbeddedStore(folder).write(index)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    reads = 0
    while not done.is_set():
        try:
            EmbeddedStore(folder).read()
        except StoreError as err:
            failures.append(str(err))
        reads += 1
    writer.join()
    assert reads > 0 and not [f for f in failures if "files damaged" in f or "rebuild" in f], failures
