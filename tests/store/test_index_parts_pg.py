"""A retriever's own index part (tests/retrieve/test_index_parts.py's toy, built by its table
entry's hook) written into PostgreSQL and read back as it was built, and gone again when an
index without it is written over it (tests/store/conftest.py starts the server)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.store import open_store
from tests.retrieve.test_index_parts import NAME, expected_lengths, longest, toy_config  # noqa: F401


def test_the_part_is_read_back_from_postgresql_as_it_was_built(corpus: Path, longest, toy_config, pg_url):
    built, _ = build_index([corpus], toy_config)
    store = open_store(pg_url())
    store.write(built)
    read = open_store(store.url).read()
    assert read.parts == built.parts and list(read.parts[NAME].arrays["lengths"]) == expected_lengths(built)
    assert read.lsa is None  # toy_config fuses bm25 alone and observes only the toy
    question = "calibration of the tilt sensor"
    assert Pipeline(read).run(question).stage(NAME).hits == Pipeline(built).run(question).stage(NAME).hits

    store.write(replace(read, parts={}))  # the same documents, the part dropped
    again = open_store(store.url).read()
    assert again.parts == {} and list(again.chunks) == list(built.chunks)
