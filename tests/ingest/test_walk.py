import os
from pathlib import Path

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.ingest import document_ids, walk


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
