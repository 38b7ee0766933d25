"""The indexes and calibrations a sweep evaluates its configurations on (evaluate/variants.py),
on the four-file handbook: fingerprints, where the documents came from, the sweep's view of an
index, an index built or reused by fingerprint, and a gate calibrated once per setting
(issue 13: mutation testing of evaluate/)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.grid import reingest_settings
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.remember import Remembered, RememberedChunks, RememberingIndex, RememberingJudge
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.evaluate.variants import (Variant, build_variant, calibrated, fingerprint, source_roots,
                                        variant_for)
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
    variant = variant_for(handbook, "sweeps/indexes/x", False, True, 1.23456)
    assert variant.describe(base) == {"fingerprint": fingerprint(CONFIG), "path": "sweeps/indexes/x",
                                      "built": True, "seconds": 1.235, "chunks": 11,
                                      "settings": {"chunk.size": 200}}
    assert variant.describe(CONFIG)["settings"] == {}


def test_without_caching_the_variant_is_the_index_itself(handbook):
    variant = variant_for(handbook, "here", False)
    assert isinstance(variant, Variant)
    assert (variant.fingerprint, variant.path, variant.built, variant.seconds) == (fingerprint(CONFIG), "here",
                                                                                   False, 0.0)
    assert variant.index is handbook and variant.cache is None and variant.calibrations == {}
    assert type(variant.judge) is Judge


def test_with_caching_the_index_remembers_and_the_judge_judges_once(handbook):
    variant = variant_for(handbook, "here", True)
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


# ------------------------------------------------------------------------- build_variant


def test_a_variant_is_built_saved_and_read_back(handbook, corpus, tmp_path):
    config = CONFIG.with_overrides(chunk={"size": 12})
    folder = tmp_path / "sweeps" / "a"
    variant = build_variant(handbook, config, [corpus], folder, QUESTIONS, "hand.jsonl", False)
    assert (variant.built, variant.path, variant.fingerprint) == (True, str(folder), fingerprint(config))
    assert 0 < variant.seconds < 60  # the time taken to build it
    assert EmbeddedStore(folder).exists() and variant.index.config == config
    assert len(variant.index.chunks) > len(handbook.chunks)  # 12-word chunks
    # the swept index had neither a reranker nor a gate, so neither is made
    assert "reranker" not in variant.index.extra and "gate" not in variant.index.extra


def test_a_variant_gets_a_reranker_and_a_gate_when_the_swept_index_has_them(handbook, corpus, tmp_path):
    base = replace(handbook, extra={**handbook.extra, "reranker": {"weights": [1.0]}})
    config = CONFIG.with_overrides(chunk={"size": 150})
    folder = tmp_path / "r"
    only_reranker = build_variant(base, config, [corpus], folder, QUESTIONS, "hand.jsonl", False)
    fresh, _ = build_index([corpus], config)
    assert only_reranker.index.extra["reranker"] == train_reranker(fresh, config, QUESTIONS, "hand.jsonl")
    assert "gate" not in only_reranker.index.extra

    base = with_gate(handbook)
    made = build_variant(base, config, [corpus], tmp_path / "g", QUESTIONS, "hand.jsonl", True)
    assert "reranker" not in made.index.extra
    gate, reader = calibrate_index(fresh, config, QUESTIONS, config.gate.rule, "hand.jsonl")
    assert (made.index.extra["gate"], made.index.extra["reader"]) == (gate, reader)
    assert made.index.extra["gate"]["golden"] == "hand.jsonl"
    assert isinstance(made.index, RememberingIndex)  # caching asked for


def test_a_kept_variant_of_the_same_fingerprint_is_reused_not_rebuilt(handbook, corpus, tmp_path):
    config = CONFIG.with_overrides(chunk={"size": 12})
    folder = tmp_path / "kept"
    build_variant(handbook, config, [corpus], folder, QUESTIONS, "hand.jsonl", False)
    empty = tmp_path / "empty"
    empty.mkdir()
    # nothing could be built from an empty folder: the kept index is read
    again = build_variant(handbook, config.with_overrides(bm25={"k1": 0.9}), [empty], folder, QUESTIONS,
                          "hand.jsonl", True)
    assert (again.built, again.path, again.fingerprint) == (False, str(folder), fingerprint(config))
    assert 0 < again.seconds < 60 and isinstance(again.index, RememberingIndex)
    assert len(again.index.chunks) > len(handbook.chunks)


def test_a_kept_index_of_other_settings_is_replaced(handbook, corpus, tmp_path):
    folder = tmp_path / "kept"
    EmbeddedStore(folder).write(handbook)  # size 200
    config = CONFIG.with_overrides(chunk={"size": 12})
    variant = build_variant(handbook, config, [corpus], folder, QUESTIONS, "hand.jsonl", False)
    assert variant.built and EmbeddedStore(folder).read().config.chunk.size == 12


def test_no_chunk_is_an_error_that_names_the_folders_and_fingerprint(handbook, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    config = CONFIG.with_overrides(chunk={"size": 12})
    with pytest.raises(ConfigError) as info:
        build_variant(handbook, config, [empty, empty], tmp_path / "v", QUESTIONS, "hand.jsonl", False)
    assert info.value.problem == f"no chunk was made from {empty}, {empty} with {fingerprint(config)}"
    assert info.value.hint == "check --docs"
    assert not EmbeddedStore(tmp_path / "v").exists()


# ---------------------------------------------------------------------------- calibrated


def test_an_index_without_a_gate_is_used_as_it_is(handbook):
    variant = variant_for(handbook, "here", False)
    index, how = calibrated(variant, CONFIG.with_overrides(bm25={"k1": 0.9}), QUESTIONS, "hand.jsonl")
    assert (index, how) == (handbook, "none") and index is handbook


def test_an_index_calibrated_for_these_settings_keeps_its_gate(handbook):
    variant = variant_for(with_gate(handbook), "here", False)
    index, how = calibrated(variant, CONFIG, QUESTIONS, "hand.jsonl")
    assert how == "index" and index is variant.index and variant.calibrations == {}
    # under another rule than cost, the cost does not matter
    balanced = CONFIG.with_overrides(gate={"rule": "balanced"})
    variant = variant_for(with_gate(handbook, balanced), "here", False)
    assert calibrated(variant, balanced.with_overrides(gate={"cost": 9.0}), QUESTIONS, "hand.jsonl")[1] == "index"


@pytest.mark.parametrize("other", [{"bm25": {"k1": 0.9}}, {"gate": {"rule": "balanced"}},
                                   {"gate": {"cost": 9.0}}])
def test_other_settings_rule_or_cost_calibrate_on_the_train_split(handbook, other):
    variant = variant_for(with_gate(handbook), "here", True)
    config = CONFIG.with_overrides(**other)
    index, how = calibrated(variant, config, QUESTIONS, "hand.jsonl")
    assert how == "train" and index is not variant.index
    gate, reader = calibrate_index(handbook, config, QUESTIONS, config.gate.rule, "hand.jsonl")
    assert (index.extra["gate"], index.extra["reader"]) == (gate, reader)
    assert index.chunks is variant.index.chunks  # the same index, another calibration
    assert set(index.extra) == set(variant.index.extra)
    # made with the variant's stage cache and judge
    assert len(variant.cache) > 0 and set(variant.judge._judged) == {"sensor", "battery"}


def test_a_calibration_is_made_once_per_settings_rule_cost_and_budget(handbook):
    variant = variant_for(with_gate(handbook), "here", False)
    k1 = CONFIG.with_overrides(bm25={"k1": 0.9})
    first, _ = calibrated(variant, k1, QUESTIONS, "hand.jsonl")
    assert calibrated(variant, k1, QUESTIONS, "hand.jsonl") == (first, "train")
    assert calibrated(variant, k1, QUESTIONS, "hand.jsonl")[0] is first
    assert len(variant.calibrations) == 1
    for n, other in enumerate([{"answer": {"budget_words": 500}}, {"gate": {"cost": 9.0}},
                               {"gate": {"rule": "balanced"}}, {"bm25": {"k1": 0.8}}], 2):
        index, how = calibrated(variant, k1.with_overrides(**other), QUESTIONS, "hand.jsonl")
        assert how == "train" and index is not first and len(variant.calibrations) == n
