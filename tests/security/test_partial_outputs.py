"""Issue 51, Low: `trec qrels --out` / `trec run` and `sweep --out` left partial files when the
disk filled up; now a full disk is a DiskError, nothing half-written stays, and an earlier
file or sweep of the same name is as it was. ENOSPC is simulated by a file that writes half and
raises (tests/store/test_full_disk.py does the same for run files; its tmpfs tests need root)."""

from __future__ import annotations

import errno
import io
import json
from pathlib import Path

import pytest

from glassrag.errors import DiskError
from glassrag.evaluate import sweep as sweeps
from glassrag.evaluate.trec import write_qrels
from glassrag.store import safefile
from tests.conftest import HANDBOOK_QUESTIONS


class Half(io.FileIO):
    def write(self, data) -> int:  # type: ignore[override]
        super().write(bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device", self.name)


def test_qrels_on_a_full_disk_leave_the_earlier_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "qrels.txt"
    target.write_text("the earlier qrels\n")
    monkeypatch.setattr(safefile.os, "fdopen", lambda fd, mode: Half(fd, "wb"))
    with pytest.raises(DiskError, match="the disk is full"):
        write_qrels(HANDBOOK_QUESTIONS, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels.txt"]
    assert target.read_text() == "the earlier qrels\n"


def test_qrels_are_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "qrels.txt"
    assert write_qrels(HANDBOOK_QUESTIONS, target) == 3
    assert target.read_text().splitlines()[0] == "sensor 0 manual 1"


class FakeSweep:
    configs: list = []
    test = None

    def to_dict(self) -> dict:
        return {"format": "glassrag-sweep", "configs": list(range(1000))}


def test_a_sweep_on_a_full_disk_leaves_nothing_half_written(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "sweeps" / "k1"
    (target / "runs").mkdir(parents=True)
    (target / "sweep.json").write_text('{"earlier": true}')

    def half(self: Path, text: str, encoding: str | None = None) -> int:
        with open(self, "w", encoding=encoding) as f:
            f.write(text[: len(text) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", half)
    with pytest.raises(DiskError, match="the disk is full"):
        sweeps.write_sweep(FakeSweep(), target)  # type: ignore[arg-type]
    monkeypatch.undo()
    assert sorted(p.name for p in target.parent.iterdir()) == ["k1"]  # no .k1.tmp left
    assert json.loads((target / "sweep.json").read_text()) == {"earlier": True}
