"""Issue 51.4: CURRENT is accepted only as the name of a generation of its folder (`gen-…`).
A crafted one (`.`, `..`, `gen-x/..`, an absolute path, a link) made the next write delete
the folder it named, the user's saved runs with it; now the index is "damaged", a write
refuses, and nothing is deleted. A link planted as the pointer's temporary file is not
written through."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.errors import StoreError
from glassrag.store import EmbeddedStore

PRECIOUS = "the user's own file\n"


@pytest.fixture
def index(tmp_path: Path, corpus: Path) -> Path:
    folder = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(folder)]) == 0
    (folder / "runs").mkdir()
    (folder / "runs" / "kept.json").write_text("{}")  # a run the user saved
    return folder


def everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("crafted", [".", "..", "gen-x/..", "gen-x/../..", "ABSOLUTE", "", "runs",
                                     "gen-../../x", "gen-a\nb"])
def test_a_crafted_pointer_is_damage_and_deletes_nothing(index: Path, tmp_path: Path, corpus: Path,
                                                         capsys, crafted: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text(PRECIOUS)
    (index / "gen-x").mkdir()  # so that gen-x/.. exists
    (index / "CURRENT").write_text(str(outside) if crafted == "ABSOLUTE" else crafted)
    before = everything(index)
    assert main(["ingest", str(corpus), "--index", str(index)]) == 3
    assert "index damaged: CURRENT names" in " ".join(capsys.readouterr().err.split())
    assert main(["ask", "What does E-4107 mean?", "--index", str(index)]) == 3
    assert everything(index) == before  # the runs, the generation and the pointer are all still there
    assert (outside / "precious.txt").read_text() == PRECIOUS


def test_a_pointer_that_is_a_link_is_damage(index: Path, tmp_path: Path) -> None:
    live = (index / "CURRENT").read_text().strip()
    (tmp_path / "elsewhere").write_text(live + "\n")
    (index / "CURRENT").unlink()
    (index / "CURRENT").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StoreError, match="index damaged"):
        EmbeddedStore(index).read()


def test_a_generation_that_is_a_link_is_damage(index: Path, tmp_path: Path) -> None:
    live = (index / "CURRENT").read_text().strip()
    (index / live).rename(tmp_path / "moved")
    (index / live).symlink_to(tmp_path / "moved")
    with pytest.raises(StoreError, match="index damaged"):
        EmbeddedStore(index).read()


def test_a_link_planted_as_the_pointers_temporary_file_is_not_written_through(
        index: Path, tmp_path: Path, corpus: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text(PRECIOUS)
    (index / ".CURRENT.tmp").symlink_to(precious)  # the name the pointer was written under
    (corpus / "extra.md").write_text("# Extra\n\nThe spare battery is in the left drawer.\n")
    assert main(["ingest", str(corpus), "--index", str(index)]) == 0  # a new generation is written
    assert precious.read_text() == PRECIOUS
    assert main(["ask", "What does E-4107 mean?", "--index", str(index)]) == 0


def test_a_normal_rewrite_still_replaces_the_generation(index: Path, corpus: Path) -> None:
    first = (index / "CURRENT").read_text().strip()
    (corpus / "extra.md").write_text("# Extra\n\nThe spare battery is in the left drawer.\n")
    assert main(["ingest", str(corpus), "--index", str(index)]) == 0
    second = (index / "CURRENT").read_text().strip()
    assert second != first and not (index / first).exists() and (index / second).is_dir()
    assert (index / "runs" / "kept.json").exists()
