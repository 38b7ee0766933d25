"""One index of a workbench (evaluate/variant.py) and the indexes a workbench builds and keeps
(evaluate/workbench.py), on the four-file handbook: fingerprints, where a sweep finds the
documents (evaluate/sweep.py source_roots), the workbench's view of an index, an index built or
reused by fingerprint (issue 13: mutation testing of evaluate/)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.grid import Grid, reingest_settings
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.remember import Remembered, RememberedChunks, RememberingIndex, RememberingJudge
from glassrag.evaluate.sweep import run_sweep, source_roots
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.evaluate.variant import Variant, cache_counts, fingerprint, variant_for
from glassrag.evaluate.workbench import Workbench
from glassrag.indexer import build_index
from glassrag.stage_cache import StageCache, digest
from glassrag.store import EmbeddedStore
from glassrag.store.base import Index

from tests.conftest import HANDBOOK, HANDBOOK_QUESTIONS, write_corpus

CONFIG = Config().with_overrides(retrieve={"retrievers": ["bm25"]}, lsa={"dim": 4}, answer={"k": 2},
                                 rerank={"method": "none", "pool": 2})

QUESTIONS = HANDBOOK_QUESTIONS


@pytest.fixture
def handbook(corpus: Path) -> Index:
    built, report = build_index([corpus], CONFIG)
    assert not report.failed
    return built


def with_gate(index: Index, config: Config = CONFIG) -> Index:
    gate, reader = calibrate_index(index, config, QUESTIONS, config.gate.rule, "hand.jsonl")
    return replace(index, extra={**index.extra, "gate": gate, "reader": reader})


def built_from(base: Index, docs: list[Path], folder: Path, caching: str = "none") -> Workbench:
    """A workbench that starts from `base` and builds from `docs` into `folder`."""
    return Workbench(QUESTIONS, "hand.jsonl", base=base, build=lambda c: build_index(docs, c)[0], folder=folder,
                     caching=caching)


# -------------------------------------------------------------------------- fingerprint


def test_the_fingerprint_is_a_digest_of_the_settings_an_index_is_built_with():
    fp = fingerprint(CONFIG)
    assert fp == digest("index", reingest_settings(CONFIG))[:12] and len(fp) == 12
    assert fingerprint(CONFIG.with_overrides(bm25={"k1": 0.9}, answer={"k": 4})) == fp  # query time
    assert fingerprint(CONFIG.with_overrides(chunk={"size": 120})) != fp


# ------------------------------------------------------------------------- source_roots


def test_the_roots_are_found_from_nested_document_ids(tmp_path):
    (tmp_path / "docs" / "manuals" / "old").mkdir(parents=True)
    root = write_corpus(tmp_path / "docs", {"manuals/tx200.md": HANDBOOK["manual.md"],
                                            "manuals/old/tx100.md": "# TX-100\n\nRetired in 2019.\n",
                                            "notes.txt": HANDBOOK["notes.txt"]})
    other = write_corpus(tmp_path / "more", {"alpha.md": HANDBOOK["scanner.md"]})
    index, _ = build_index([root, other], CONFIG)
    assert list(index.documents) == ["alpha", "manuals/old/tx100", "manuals/tx200", "notes"]
    # each root once, in the order of the documents that were read from it
    assert source_roots(index) == [other, root]


def test_a_relative_source_as_deep_as_its_id_has_the_working_folder_as_its_root(handbook, tmp_path,
                                                                                 monkeypatch):
    (tmp_path / "manuals").mkdir()
    monkeypatch.chdir(tmp_path)
    manual = replace(handbook.documents["manual"], id="manuals/tx200", source="manuals/tx200.md")
    shallow = replace(handbook.documents["notes"], id="a/b/notes", source="notes.txt")  # deeper than its path
    index = replace(handbook, documents={manual.id: manual, shallow.id: shallow})
    assert source_roots(index) == [Path(".")]


def test_a_beir_corpus_has_no_roots(handbook):
    beir = replace(handbook.documents["notes"], format="beir")
    with pytest.raises(ConfigError) as info:
        source_roots(replace(handbook, documents={"notes": beir}))
    assert info.value.problem == "this index was built from a BEIR corpus: the sweep cannot find its files"
    assert info.value.hint == "give the corpus folder with --docs"


def test_a_root_that_is_gone_is_named(handbook, corpus, tmp_path):
    moved = tmp_path / "moved"
    os.rename(corpus, moved)
    doc = handbook.documents["manual"]
    with pytest.raises(ConfigError) as info:
        source_roots(replace(handbook, documents={"manual": doc}))
    assert info.value.problem == f"document manual was read from {corpus / 'manual.md'}, which is gone"
    assert info.value.hint == "give the source documents with --docs PATH"


# -------------------------------------------------------------- Variant, variant_for


def test_a_variant_describes_the_settings_it_differs_in(handbook):
    base = CONFIG.with_overrides(chunk={"size": 120}, bm25={"k1": 0.9})
    variant = variant_for(handbook, "sweeps/indexes/x", "none", True, 1.23456)
    assert variant.describe(base) == {"fingerprint": fingerprint(CONFIG), "path": "sweeps/indexes/x",
                                      "built": True, "seconds": 1.235, "chunks": 11,
                                      "settings": {"chunk.size": 200}}
    assert variant.describe(CONFIG)["settings"] == {}


def test_without_caching_the_variant_is_the_index_itself(handbook):
    variant = variant_for(handbook, "here", "none")
    assert isinstance(variant, Variant)
    assert (variant.fingerprint, variant.path, variant.built, variant.seconds) == (fingerprint(CONFIG), "here",
                                                                                   False, 0.0)
    assert variant.index is handbook and variant.cache is None and variant.calibrations == {}
    assert type(variant.judge) is Judge


def test_caching_stages_keeps_a_stage_cache_and_the_index_itself(handbook):
    variant = variant_for(handbook, "here", "stages")
    assert variant.index is handbook and type(variant.judge) is Judge
    assert isinstance(variant.cache, StageCache) and variant.cache.label == fingerprint(CONFIG)


def test_caching_all_the_index_remembers_and_the_judge_judges_once(handbook):
    variant = variant_for(handbook, "here", "all")
    index = variant.index
    assert isinstance(index, RememberingIndex)
    assert isinstance(index.chunks, RememberedChunks) and index.chunks.table is handbook.chunks
    assert isinstance(index.documents, Remembered) and index.documents.table is handbook.documents
    assert (index.config, index.counts, index.lsa, index.extra) == (handbook.config, handbook.counts,
                                                                     handbook.lsa, handbook.extra)
    assert isinstance(variant.cache, StageCache) and variant.cache.label == fingerprint(CONFIG)
    assert isinstance(variant.judge, RememberingJudge)
    # the judge reads the remembered chunks: a question is resolved against them
    assert variant.judge.judge(QUESTIONS[0]).relevant_chunks() == {handbook.chunks[3].id}


def test_the_cache_counts_add_up_over_the_variants_that_have_a_cache(handbook):
    one, two, plain = (variant_for(handbook, p, c) for p, c in (("a", "stages"), ("b", "all"), ("c", "none")))
    one.cache.get("x"), one.cache.put("x", 1), one.cache.get("x")
    two.cache.get("y"), two.cache.put("y", 2), two.cache.put("z", 3)
    assert cache_counts([one, two, plain]) == {"hits": 1, "misses": 2, "stored": 3}
    assert cache_counts([plain]) == {"hits": 0, "misses": 0, "stored": 0}


# ------------------------------------------------------------------ building a variant


def test_a_variant_is_built_saved_and_read_back(handbook, corpus, tmp_path):
    config = CONFIG.with_overrides(chunk={"size": 12})
    workbench = built_from(handbook, [corpus], tmp_path / "sweeps")
    variant = workbench.variant(config)
    folder = tmp_path / "sweeps" / fingerprint(config)
    assert (variant.built, variant.path, variant.fingerprint) == (True, str(folder), fingerprint(config))
    assert 0 < variant.seconds < 60  # the time taken to build it
    assert workbench.timing["indexes_seconds"] >= variant.seconds
    assert EmbeddedStore(folder).exists() and variant.index.config == config
    assert len(variant.index.chunks) > len(handbook.chunks)  # 12-word chunks
    # the base index had neither a reranker nor a gate, so neither is made
    assert "reranker" not in variant.index.extra and "gate" not in variant.index.extra
    assert workbench.variant(config.with_overrides(bm25={"k1": 0.9})) is variant  # asked again: kept
    assert workbench.variants() == [workbench.variant(CONFIG), variant]


def test_a_variant_gets_a_reranker_and_a_gate_when_the_base_index_has_them(handbook, corpus, tmp_path):
    base = replace(handbook, extra={**handbook.extra, "reranker": {"weights": [1.0]}})
    config = CONFIG.with_overrides(chunk={"size": 150})
    only_reranker = built_from(base, [corpus], tmp_path / "r").variant(config)
    fresh, _ = build_index([corpus], config)
    assert only_reranker.index.extra["reranker"] == train_reranker(fresh, config, QUESTIONS, "hand.jsonl")
    assert "gate" not in only_reranker.index.extra

    made = built_from(with_gate(handbook), [corpus], tmp_path / "g", "all").variant(config)
    assert "reranker" not in made.index.extra
    gate, reader = calibrate_index(fresh, config, QUESTIONS, config.gate.rule, "hand.jsonl")
    assert (made.index.extra["gate"], made.index.extra["reader"]) == (gate, reader)
    assert made.index.extra["gate"]["golden"] == "hand.jsonl"
    assert isinstance(made.index, RememberingIndex)  # caching asked for


def test_a_kept_variant_of_the_same_fingerprint_is_reused_not_rebuilt(handbook, corpus, tmp_path):
    config = CONFIG.with_overrides(chunk={"size": 12})
    built_from(handbook, [corpus], tmp_path / "kept").variant(config)
    empty = tmp_path / "empty"
    empty.mkdir()
    # nothing could be built from an empty folder: the kept index is read
    again = built_from(handbook, [empty], tmp_path / "kept", "all").variant(config.with_overrides(bm25={"k1": 0.9}))
    assert (again.built, again.path, again.fingerprint) == (False, str(tmp_path / "kept" / fingerprint(config)),
                                                            fingerprint(config))
    assert 0 < again.seconds < 60 and isinstance(again.index, RememberingIndex)
    assert len(again.index.chunks) > len(handbook.chunks)


def test_a_kept_index_of_other_settings_is_replaced(handbook, corpus, tmp_path):
    config = CONFIG.with_overrides(chunk={"size": 12})
    EmbeddedStore(tmp_path / "kept" / fingerprint(config)).write(handbook)  # size 200
    variant = built_from(handbook, [corpus], tmp_path / "kept").variant(config)
    assert variant.built and EmbeddedStore(tmp_path / "kept" / fingerprint(config)).read().config.chunk.size == 12


def test_without_a_folder_a_built_index_is_kept_in_memory(handbook, corpus):
    config = CONFIG.with_overrides(chunk={"size": 12})
    workbench = Workbench(QUESTIONS, "hand.jsonl", build=lambda c: build_index([corpus], c)[0])
    variant = workbench.variant(config)
    assert (variant.built, variant.path) == (True, "") and variant.index.config == config
    assert workbench.variant(CONFIG).index.config == CONFIG  # no base: built with the configuration itself


def test_without_a_builder_only_the_base_index_s_settings_are_measured(handbook):
    workbench = Workbench(QUESTIONS, "hand.jsonl", label="idx", base=handbook)
    assert workbench.variant(CONFIG.with_overrides(bm25={"k1": 0.9})).index is handbook
    with pytest.raises(ConfigError) as info:
        workbench.variant(CONFIG.with_overrides(chunk={"size": 12}))
    assert info.value.problem.startswith("idx has no documents to build an index with other index-time settings")


def test_no_chunk_is_an_error_that_names_the_folders_and_fingerprint(handbook, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    EmbeddedStore(tmp_path / "idx").write(handbook)
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"id": "q", "question": "What does E-4107 mean?", "split": "train", "answerable": false}\n')
    config = CONFIG.with_overrides(chunk={"size": 12})
    with pytest.raises(ConfigError) as info:
        run_sweep(tmp_path / "idx", golden, Grid(listed=(("small", {"chunk.size": 12}),)), docs=[empty, empty],
                  test=False)
    assert info.value.problem == f"no chunk was made from {empty}, {empty} with {fingerprint(config)}"
    assert info.value.hint == "check --docs"
    assert not EmbeddedStore(tmp_path / "idx" / "sweeps" / "indexes" / fingerprint(config)).exists()
