import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.errors import StoreError
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from glassrag.store import embedded
from tests.conftest import live_generation


def answers(index, questions=("what does E-4107 mean", "daily allowance Lisbon", "quiet hours")):
    pipe = Pipeline(index)
    return [[(h.chunk_id, round(h.score, 6)) for h in pipe.run(q).stage("fuse").hits] for q in questions]


def test_roundtrip_gives_the_same_answers(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    loaded = store.read()
    assert loaded.documents == index.documents
    assert loaded.chunks == index.chunks
    assert loaded.config == index.config
    np.testing.assert_array_equal(loaded.lsa.passage_vectors, index.lsa.passage_vectors)
    assert answers(loaded) == answers(index)


def test_crash_in_the_middle_of_a_save_leaves_the_previous_index(index, tmp_path: Path, monkeypatch):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    before = answers(store.read())

    def boom(folder, documents, chunks):
        (folder / "chunks.jsonl").write_text('{"half": ')
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(embedded, "write_tables", boom)
    with pytest.raises(OSError, match="simulated"):
        store.write(index)
    assert answers(store.read()) == before
    assert not [p for p in (tmp_path / "idx").iterdir() if p.name.startswith(".tmp")]


def test_interrupted_generation_is_ignored_and_cleaned(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    (tmp_path / "idx" / "gen-stale").mkdir()
    (tmp_path / "idx" / ".tmp-gen-x").mkdir()
    assert store.read().chunks == index.chunks
    store.write(index)
    names = sorted(p.name for p in (tmp_path / "idx").iterdir() if p.name != ".writer.lock")
    assert len(names) == 2 and names[0] == "CURRENT" and names[1].startswith("gen-2")


def test_missing_folder_and_not_an_index(tmp_path: Path):
    with pytest.raises(StoreError, match="does not exist") as info:
        EmbeddedStore(tmp_path / "nope").read()
    assert "glassrag ingest" in info.value.hint
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "file.txt").write_text("x")
    with pytest.raises(StoreError, match="not a glassrag index"):
        EmbeddedStore(tmp_path / "other").read()


def test_refuses_to_write_into_a_foreign_folder(index, tmp_path: Path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"x")
    with pytest.raises(StoreError, match="not empty and is not a glassrag index"):
        EmbeddedStore(tmp_path / "photos").write(index)
    assert sorted(p.name for p in (tmp_path / "photos").iterdir()) == ["cat.jpg"]


def test_other_format_version_is_refused_with_advice(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    gen = (tmp_path / "idx" / "CURRENT").read_text().strip()
    manifest_path = tmp_path / "idx" / gen / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format_version"] = 99
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="index format 99") as info:
        store.read()
    assert "rebuild" in info.value.hint


def test_no_pickle_in_saved_arrays(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    gen = live_generation(tmp_path / "idx")
    arrays = sorted(gen.rglob("*.np[yz]"))
    # a test that passes with nothing written proves nothing: the term counts, the BM25
    # weights and the LSA model of the fixture index must be among the arrays read back
    names = {p.relative_to(gen).as_posix() for p in arrays}
    assert {"lexical/tf_data.npy", "lexical/tf_indptr.npy", "lexical/bm25.npy",
            "lexical/doc_len.npy"} <= names, names
    assert any(n.startswith("lsa/") for n in names), names
    for path in arrays:
        if path.suffix == ".npy":
            np.load(path, allow_pickle=False)
        else:
            np.load(path, allow_pickle=False).close()
    assert not list((tmp_path / "idx").rglob("*.pkl")) and not list((tmp_path / "idx").rglob("*.pickle"))
