"""Documents and chunks spooled to disk during ingest (glassrag/store/spool.py): they read
back as they were put in, and an index built through the spool is written byte for byte
as the same index held in memory."""

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag import indexer
from glassrag.cli import main as cli
from glassrag.schema import Chunk, Document, Section
from glassrag.store import EmbeddedStore
from glassrag.store.base import Index
from glassrag.store.spool import ChunkSpool, DocumentSpool, in_order
from tests.conftest import live_generation


def doc(doc_id: str, text: str, **metadata) -> Document:
    return Document(doc_id, f"title of {doc_id}", f"{doc_id}.md", "markdown", text,
                    (Section("§ 1", 0, len(text), ("Heading",)),), metadata, f"hash-{doc_id}")


def test_documents_read_back_as_written_in_id_order(tmp_path: Path):
    spool = DocumentSpool(tmp_path)
    b, a = doc("b", "Zwölf Boxkämpfer — jagen Viktor"), doc("a", "plain", date="2024-01-02", tags=["x"])
    spool["b"] = b
    spool["a"] = a
    assert list(spool) == ["a", "b"]  # sorted, not insertion order
    assert spool["b"] == b and spool["a"] == a
    assert spool["b"] == b  # the kept last document is the right one after another read
    assert dict(spool.items()) == {"a": a, "b": b}
    assert "a" in spool and "c" not in spool and len(spool) == 2


def test_a_document_set_again_replaces_and_a_deleted_one_is_gone(tmp_path: Path):
    spool = DocumentSpool(tmp_path)
    spool["a"] = doc("a", "first version")
    assert spool["a"].text == "first version"
    spool["a"] = doc("a", "second version")
    assert spool["a"].text == "second version" and len(spool) == 1
    spool["b"] = doc("b", "other")
    del spool["a"]
    assert list(spool) == ["b"]
    with pytest.raises(KeyError):
        spool["a"]


def test_chunks_come_back_in_the_order_asked(tmp_path: Path):
    spool = ChunkSpool(tmp_path)
    made = {d: [Chunk.make(d, f"§ {i}", f"{d} text {i}", i, i + 1, i, ("H", "é")) for i in range(n)]
            for d, n in (("b", 3), ("a", 2), ("c", 0))}
    where = {d: spool.extend(cs) for d, cs in made.items()}
    assert where == {"b": (0, 3), "a": (3, 2), "c": (5, 0)}
    records = in_order(["a", "b", "c"], where)
    np.testing.assert_array_equal(records, [3, 4, 0, 1, 2])
    view = spool.view(records)
    assert list(view) == made["a"] + made["b"]
    assert view[1] == made["a"][1] and view[-1] == made["b"][2] and view[1:3] == [made["a"][1], made["b"][0]]
    assert view.id_of(2) == made["b"][0].id and len(view) == 5


def test_the_spool_leaves_no_file_in_its_folder(corpus: Path, small_config, tmp_path: Path):
    folder = tmp_path / "spool"
    folder.mkdir()
    built, _ = indexer.build_index([corpus], small_config, spool_dir=folder)
    assert len(built.chunks) > 0 and built.documents
    assert list(folder.iterdir()) == []  # unlinked files: a crash leaves nothing either


def test_spooled_index_is_written_as_the_same_index_held_in_memory(corpus: Path, small_config,
                                                                    tmp_path: Path):
    built, _ = indexer.build_index([corpus], small_config, spool_dir=tmp_path)
    assert type(built.documents).__name__ == "DocumentSpool"
    in_memory = Index(built.config, {d: built.documents[d] for d in built.documents}, list(built.chunks),
                      built.counts, built.lsa, built.extra, built.embeddings, sources=built.sources)
    EmbeddedStore(tmp_path / "spooled").write(built)
    EmbeddedStore(tmp_path / "memory").write(in_memory)
    a, b = live_generation(tmp_path / "spooled"), live_generation(tmp_path / "memory")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert Path("texts.bin") in files and Path("chunks.jsonl") in files
    for f in files:
        if f.name == "manifest.json":
            left, right = json.loads((a / f).read_text()), json.loads((b / f).read_text())
            left.pop("created"), right.pop("created")
            assert left == right
        else:
            assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_an_ingest_that_fails_while_spooling_leaves_the_old_index(corpus: Path, tmp_path: Path,
                                                                   monkeypatch):
    index = tmp_path / "idx"
    assert cli(["ingest", str(corpus), "--index", str(index)]) == 0
    before = EmbeddedStore(index).read()
    chunks, names = list(before.chunks), sorted(p.name for p in index.iterdir())
    (corpus / "new.md").write_text("# New\n\nA new document about the quiet hours.\n")
    extend = indexer.ChunkSpool.extend

    def fail_on_the_new_one(self, items):
        items = list(items)
        if any(c.doc_id.startswith("new") for c in items):
            raise KeyboardInterrupt("interrupted while spooling (simulated)")
        return extend(self, items)

    monkeypatch.setattr(indexer.ChunkSpool, "extend", fail_on_the_new_one)
    assert cli(["ingest", str(corpus), "--index", str(index)]) != 0  # the CLI reports the interrupt
    assert sorted(p.name for p in index.iterdir()) == names
    assert list(EmbeddedStore(index).read().chunks) == chunks
    monkeypatch.setattr(indexer.ChunkSpool, "extend", extend)
    assert cli(["ingest", str(corpus), "--index", str(index)]) == 0
    assert any(c.doc_id.startswith("new") for c in EmbeddedStore(index).read().chunks)


def term_counts(index) -> dict[tuple[str, str], float]:
    """(chunk id, term) -> count: the term counts whatever the order of rows and columns."""
    tf = index.counts.tf.tocoo()
    terms = sorted(index.counts.vocab, key=index.counts.vocab.get)
    return {(index.chunk_id(int(r)), terms[int(c)]): float(v) for r, c, v in zip(tf.row, tf.col, tf.data)}


def test_a_changed_reingest_through_the_spool_holds_what_a_fresh_ingest_holds(corpus: Path, tmp_path: Path):
    index = tmp_path / "idx"
    assert cli(["ingest", str(corpus), "--index", str(index)]) == 0
    first = sorted(p.name for p in corpus.iterdir())
    changed = corpus / first[0]
    changed.write_text(changed.read_text() + "\n\nA changed paragraph about quiet hours.\n")
    (corpus / "added.md").write_text("# Added\n\nAn added document about parking permits.\n")
    (corpus / first[1]).unlink()
    assert cli(["ingest", str(corpus), "--index", str(index), "--prune"]) == 0
    again = EmbeddedStore(index).read()
    fresh_dir = tmp_path / "fresh"
    assert cli(["ingest", str(corpus), "--index", str(fresh_dir)]) == 0
    fresh = EmbeddedStore(fresh_dir).read()
    assert list(again.chunks) == list(fresh.chunks)
    assert dict(again.documents.items()) == dict(fresh.documents.items())
    assert len(again.documents) == len(first) and "added" in again.documents
    assert term_counts(again) == term_counts(fresh)
