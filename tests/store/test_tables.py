"""Format 2: tables read on demand, arrays memory-mapped, an unchanged re-ingest writes nothing."""

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.errors import StoreError
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from glassrag.store.tables import FolderChunks, DocumentTable, byte_offsets
from tests.conftest import live_generation, write_corpus

QUESTIONS = ("what does E-4107 mean", "daily allowance Lisbon", "quiet hours", "battery tripod")


def mapped(array) -> bool:
    """The array is a view of a memory-mapped file, not a copy in memory."""
    import mmap

    while array is not None:
        if isinstance(array, (np.memmap, mmap.mmap)):
            return True
        array = getattr(array, "base", None)
    return False


def ranked(index, config=None):
    """Every stage's (chunk id, score, rank) for a few questions, and the passages shown."""
    pipe = Pipeline(index, config)
    out = []
    for q in QUESTIONS:
        a = pipe.run(q)
        out.append([(t.name, [(h.chunk_id, h.score, h.rank) for h in t.hits]) for t in a.trace])
        shown = ([a.passage] if a.passage else []) + list(a.also_found)
        out.append([(p.chunk_id, p.text, p.excerpt, p.highlights) for p in shown])
    return out


def test_opened_index_is_memory_mapped_and_ranks_exactly_as_the_built_one(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    loaded = store.read()
    assert isinstance(loaded.chunks, FolderChunks) and isinstance(loaded.documents, DocumentTable)
    assert mapped(loaded.counts.tf.data) and mapped(loaded.counts.tf.indices)
    assert mapped(loaded.lsa.passage_vectors)
    # plain arrays over the map: a slice is not a memmap made through Python code (issue 30)
    assert type(loaded.lsa.passage_vectors) is np.ndarray and type(loaded.lsa.passage_vectors[:2]) is np.ndarray
    assert loaded.bm25_weights(index.config.bm25.k1, index.config.bm25.b) is not None
    assert ranked(loaded) == ranked(index)
    # another k1 than the stored weights': computed from the counts, the same as in memory
    other = index.config.with_overrides(bm25={"k1": 0.5})
    assert loaded.bm25_weights(0.5, other.bm25.b) is None
    assert ranked(loaded, other) == ranked(index, other)


def test_tables_read_by_offset_match_the_originals(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    loaded = store.read()
    assert len(loaded.chunks) == len(index.chunks)
    for i, c in enumerate(index.chunks):
        assert loaded.chunks[i] == c
        assert loaded.chunks[-len(index.chunks) + i] == c
        assert loaded.chunk_id(i) == c.id and loaded.position[c.id] == i
        assert loaded.chunk_words(c.id) == len(c.text.split())
    assert list(loaded.chunks) == list(index.chunks)
    assert dict(loaded.documents.items()) == dict(index.documents)
    assert list(loaded.documents) == sorted(index.documents)
    assert "no-such-doc" not in loaded.documents and "no-such-chunk" not in loaded.position
    with pytest.raises(KeyError):
        loaded.documents["no-such-doc"]
    with pytest.raises(IndexError):
        loaded.chunks[len(index.chunks)]
    for d in index.documents.values():
        assert loaded.chunks_in(d.id) == index.chunks_in(d.id)
    assert loaded.newest_date() == index.newest_date()
    assert loaded.superseded() == index.superseded()


def test_text_is_stored_once_and_non_ascii_spans_come_back(tmp_path: Path, small_config):
    text = "# Café\n\nLe café coûte 2 €. Ünïcödé — ok.\n\n## Thé\n\nLe thé est à 3 €.\n"
    corpus = write_corpus(tmp_path / "docs", {"menu.md": text})
    built, _ = build_index([corpus], small_config)
    store = EmbeddedStore(tmp_path / "idx")
    store.write(built)
    loaded = store.read()
    assert [c.text for c in loaded.chunks] == [c.text for c in built.chunks]
    gen = live_generation(tmp_path / "idx")
    rows = (gen / "chunks.jsonl").read_text(encoding="utf-8")
    assert "coûte" not in rows  # the text lives in texts.bin only
    assert (gen / "texts.bin").read_bytes().decode("utf-8") == next(iter(built.documents.values())).text


def test_byte_offsets_of_characters():
    assert byte_offsets("abc", [0, 2]) is None  # ASCII: bytes are characters
    text = "é€a"
    assert byte_offsets(text, [0, 1, 2, 3]) == {0: 0, 1: 2, 2: 5, 3: 6}


def test_unchanged_reingest_writes_nothing(corpus: Path, small_config, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    built, _ = build_index([corpus], small_config)
    store.write(built)
    generation = (tmp_path / "idx" / "CURRENT").read_text()
    again, report = build_index([corpus], small_config, store.read())
    assert report.nothing_changed and not report.added and not report.changed
    assert len(report.unchanged) == len(built.documents)
    assert again.stored is not None  # the opened index itself, not a rebuilt one
    # a changed file is a change
    (corpus / "notes.txt").write_text("Quarterly notes.\nThe fleet server sleeps at night.\n")
    changed, report = build_index([corpus], small_config, store.read())
    assert not report.nothing_changed and len(report.changed) == 1
    assert (tmp_path / "idx" / "CURRENT").read_text() == generation
    # other settings are a change too, even with the same files
    _, report = build_index([corpus], small_config.with_overrides(bm25={"k1": 1.1}), store.read())
    assert not report.nothing_changed


def test_cli_unchanged_reingest_keeps_the_generation(corpus: Path, tmp_path: Path):
    from glassrag.cli import main

    idx = tmp_path / "idx"
    assert main(["ingest", str(corpus), "--index", str(idx)]) == 0
    generation = (idx / "CURRENT").read_text()
    files = sorted(p.name for p in idx.iterdir())
    assert main(["ingest", str(corpus), "--index", str(idx)]) == 0
    assert (idx / "CURRENT").read_text() == generation
    assert sorted(p.name for p in idx.iterdir()) == files


def test_format_1_index_asks_for_a_reingest(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    gen = live_generation(tmp_path / "idx")
    manifest = json.loads((gen / "manifest.json").read_text())
    manifest["format_version"] = 1
    (gen / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(StoreError, match="index format 1") as info:
        store.read()
    assert "glassrag ingest" in info.value.hint


def test_a_cut_table_is_damage_at_open(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    gen = live_generation(tmp_path / "idx")
    data = (gen / "texts.bin").read_bytes()
    (gen / "texts.bin").write_bytes(data[:-5])
    with pytest.raises(StoreError, match="damaged"):
        store.read()


def test_rewriting_an_opened_index_links_its_unchanged_files(index, tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)
    loaded = store.read()
    loaded.extra["note"] = "trained"
    old = live_generation(tmp_path / "idx") / "texts.bin"
    inode = old.stat().st_ino
    store.write(loaded)
    new = live_generation(tmp_path / "idx")
    assert (new / "texts.bin").stat().st_ino == inode
    again = store.read()
    assert again.extra["note"] == "trained" and ranked(again) == ranked(index)


def test_a_changed_file_reanalyses_only_its_own_chunks(corpus: Path, small_config, tmp_path: Path,
                                                       monkeypatch):
    from glassrag.indexer import counts
    from glassrag.lexical.analyze import Analyzer

    store = EmbeddedStore(tmp_path / "idx")
    store.write(build_index([corpus], small_config)[0])
    (corpus / "notes.txt").write_text("Quarterly notes.\nThe fleet server sleeps at night, zebra.\n")
    seen: list[str] = []

    class Counting(Analyzer):
        def __call__(self, text):
            seen.append(text)
            return super().__call__(text)

    monkeypatch.setattr(counts, "Analyzer", Counting)  # step 3 analyses
    updated, report = build_index([corpus], small_config, store.read())
    assert len(report.changed) == 1 and seen and all("fleet server sleeps" in t for t in seen)
    monkeypatch.undo()
    fresh, _ = build_index([corpus], small_config)
    # the same counts as a fresh build, up to the order of the vocabulary
    assert set(updated.counts.vocab) == set(fresh.counts.vocab) and "zebra" in updated.counts.vocab
    np.testing.assert_array_equal(updated.counts.doc_len, fresh.counts.doc_len)
    for term, j in fresh.counts.vocab.items():
        column = updated.counts.tf[:, updated.counts.vocab[term]].toarray()
        np.testing.assert_array_equal(column, fresh.counts.tf[:, j].toarray())
    a, b = Pipeline(updated), Pipeline(fresh)
    for q in QUESTIONS:
        assert [(h.chunk_id, round(h.score, 5)) for h in a.run(q).stage("bm25").hits] == \
            [(h.chunk_id, round(h.score, 5)) for h in b.run(q).stage("bm25").hits]


def beir_folder(folder: Path, texts: dict[str, str]) -> Path:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": k, "title": "", "text": v}) + "\n" for k, v in texts.items()))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q", "text": "tilt"}) + "\n")
    return folder


def test_an_unchanged_beir_corpus_file_is_not_read_again(tmp_path: Path, small_config, monkeypatch):
    from glassrag.indexer import diff

    folder = beir_folder(tmp_path / "b", {"1": "tilt sensor", "2": "battery low", "3": "tilt again"})
    store = EmbeddedStore(tmp_path / "idx")
    store.write(build_index([folder], small_config)[0])

    def not_read(path):
        raise AssertionError("an unchanged corpus file was parsed")

    monkeypatch.setattr(diff, "load_beir_corpus", not_read)  # step 1 reads the corpora
    _, report = build_index([folder], small_config, store.read())
    assert report.nothing_changed and report.n_unchanged() == 3
    monkeypatch.undo()
    beir_folder(folder, {"1": "tilt sensor", "2": "battery very low", "3": "tilt again"})
    updated, report = build_index([folder], small_config, store.read())
    assert report.changed == ["2"] and sorted(report.unchanged) == ["1", "3"]
    store.write(updated)
    _, report = build_index([folder], small_config, store.read())
    assert report.nothing_changed
