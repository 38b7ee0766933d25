"""A retriever that needs a part of its own in the index registers how to build it in its table
entry (`Entry.build`, glassrag/stage.py) and nothing else: the indexer builds it for an index
whose settings fuse or observe the retriever, without naming it, and both stores write it and
read it back as it was built (issue 29.5: indexing in parts). tests/store/test_index_parts_pg.py
reads it back from PostgreSQL."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glassrag.errors import StoreError
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, index_parts, offered
from glassrag.retrieve.base import Building, Entry, Ranks, hits_of
from glassrag.schema import Hit
from glassrag.store import EmbeddedStore
from glassrag.store.base import Index, Part

NAME = "longest"


def build_longest(name: str, index: Index, building: Building) -> Index:
    """The toy's part: every chunk's indexed text length in characters, in index order."""
    lengths = np.array([len(t) for t in building.texts()], dtype=np.int64)
    return replace(index, parts={**index.parts, name: Part({"unit": "characters"}, {"lengths": lengths})})


class Longest(Ranks):
    """Ranks every chunk by its length, read from its own part of the index."""

    name = NAME
    kind = "retrieve"

    def __init__(self, index: Index, config: Any, bm25: Any) -> None:
        self.index, self.lengths = index, index.parts[NAME].arrays["lengths"]
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"family": "lexical", **self.index.parts[NAME].params}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        rows = np.argsort(-np.asarray(self.lengths), kind="stable")[:5]
        return hits_of(self.index, self.name, rows, np.asarray(self.lengths, dtype=np.float64)[rows]), []


@pytest.fixture
def longest(monkeypatch):
    monkeypatch.setitem(RETRIEVERS, NAME, Entry(Longest, available=lambda index: NAME in index.parts,
                                                build=build_longest))


@pytest.fixture
def toy_config(small_config):
    return small_config.with_overrides(retrieve={"retrievers": ["bm25"], "observe": [NAME]})


def expected_lengths(index: Index) -> list[int]:
    return [len(c.text) for c in index.chunks]  # no context header: the indexed text is the chunk's


def test_the_entry_s_build_makes_its_part_and_the_retriever_reads_it(corpus: Path, longest, toy_config):
    index, _ = build_index([corpus], toy_config)
    part = index.parts[NAME]
    assert part.params == {"unit": "characters"} and list(part.arrays["lengths"]) == expected_lengths(index)
    assert (NAME, build_longest) in index_parts(toy_config) and NAME in offered(index)
    hits = Pipeline(index).run("tilt sensor").stage(NAME).hits
    assert [h.score for h in hits] == sorted(expected_lengths(index), reverse=True)[:5]


def test_the_part_is_read_back_from_a_folder_as_it_was_built(corpus: Path, longest, toy_config,
                                                             tmp_path: Path):
    built, _ = build_index([corpus], toy_config)
    store = EmbeddedStore(tmp_path / "idx")
    store.write(built)
    read = store.read()
    assert read.parts == built.parts and read.parts[NAME].arrays["lengths"].dtype == np.int64
    assert (tmp_path / "idx" / (tmp_path / "idx" / "CURRENT").read_text().strip() / "parts" / NAME
            / "lengths.npy").is_file()
    question = "calibration of the tilt sensor"
    assert Pipeline(read).run(question).stage(NAME).hits == Pipeline(built).run(question).stage(NAME).hits


def test_no_part_is_built_for_a_retriever_the_settings_do_not_name(corpus: Path, longest, small_config):
    index, _ = build_index([corpus], small_config)
    assert index.parts == {} and NAME not in offered(index)
    assert [name for name, _ in index_parts(small_config)] == ["lsa"]  # fused by small_config


def test_a_re_ingest_builds_the_part_again_for_the_new_chunks(corpus: Path, longest, toy_config,
                                                              tmp_path: Path):
    store = EmbeddedStore(tmp_path / "idx")
    store.write(build_index([corpus], toy_config)[0])
    (corpus / "rota.txt").write_text("Night rota.\nThe fleet server sleeps at night.\n")
    updated, report = build_index([corpus], toy_config, store.read())
    assert report.added == ["rota"] and not report.changed
    assert list(updated.parts[NAME].arrays["lengths"]) == expected_lengths(updated)
    store.write(updated)
    assert store.read().parts == updated.parts


def test_a_part_whose_name_cannot_name_a_file_is_refused_before_anything_is_written(corpus: Path, longest,
                                                                                 toy_config, tmp_path: Path):
    built, _ = build_index([corpus], toy_config)
    bad = replace(built, parts={"../escape": built.parts[NAME]})
    with pytest.raises(StoreError, match="cannot name a stored file"):
        EmbeddedStore(tmp_path / "idx").write(bad)
    assert not EmbeddedStore(tmp_path / "idx").exists()


def test_the_indexer_names_no_retriever():
    """The indexer asks the tables (`index_parts`); no module of it names a retriever."""
    import glassrag.indexer as package

    for module in Path(package.__file__).parent.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        assert '"lsa"' not in text and "LSA(" not in text and "embed_chunks" not in text, module.name
