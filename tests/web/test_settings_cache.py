"""The web app's settings cache is sized by memory (issue 13.6): as many pipelines as fit in
PIPELINE_BUDGET_MB, estimated from the index, between 1 and PIPELINES_MAX."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from glassrag.web import catalog
from glassrag.web.catalog import Source, pipeline_bytes, pipelines_kept


@pytest.fixture
def source(index, tmp_path: Path) -> Source:
    EmbeddedStore(tmp_path / "idx").write(index)
    return Source("idx", tmp_path / "idx")


def test_the_estimate_is_within_a_factor_of_two_of_what_a_pipeline_keeps(index):
    Pipeline(index, index.config.with_overrides(bm25={"k1": 1.0}))
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = [Pipeline(index, index.config.with_overrides(bm25={"k1": 1.1 + i / 10})) for i in range(4)]
    used = (tracemalloc.get_traced_memory()[0] - base) / len(kept)
    tracemalloc.stop()
    assert used / 2 <= pipeline_bytes(index) <= used * 2, (used, pipeline_bytes(index))


def test_the_cache_keeps_what_fits_in_its_budget(source: Source, monkeypatch):
    index = source.index()
    assert pipelines_kept(index) == catalog.PIPELINES_MAX  # a tiny index: the cap
    per = pipeline_bytes(index)
    monkeypatch.setattr(catalog, "PIPELINE_BUDGET_MB", 2.5 * per / 2**20)
    assert pipelines_kept(index) == 2
    assert pipelines_kept(index, per / 2 / 2**20) == 1  # never none
    configs = [index.config.with_overrides(bm25={"k1": 1.0 + i / 10}) for i in range(3)]
    built = [source.pipeline(c) for c in configs]
    assert source.pipeline(configs[2]) is built[2] and source.pipeline(configs[1]) is built[1]
    assert source.pipeline(configs[0]) is not built[0]  # the oldest was dropped
