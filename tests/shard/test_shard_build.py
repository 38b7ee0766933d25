"""Cutting an index into shards (glassrag/shard/build.py) and a shard's search, in-process: no
Ray needed (tests/ray/ runs them on a cluster). Where Ray is absent, searching a sharded index is
an error that says how to install it."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest

from glassrag.cli import main
from glassrag.config import Config
from glassrag.errors import ConfigError, ShardError, StoreError
from glassrag.indexer import build_index
from glassrag.lexical.bm25 import BM25, CorpusStats, top_k
from glassrag.query import Query
from glassrag.retrieve import make_retriever
from glassrag.shard import shard_index, shard_of
from glassrag.shard.serve import ShardServer, merge_tops
from glassrag.store import EmbeddedStore
from tests.conftest import HANDBOOK, write_corpus

QUESTIONS = ["What does E-4107 mean?", "battery below ten percent", "mirror motor", "travel allowance Lisbon",
             "firmware updates", "sensor calibration error"]


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("shard")
    index, report = build_index([write_corpus(folder / "docs", HANDBOOK)], Config())
    assert not report.failed
    EmbeddedStore(folder / "single").write(index)
    return folder / "single"


def test_shard_of_is_stable_and_in_range():
    assert shard_of("manual", 3) == int.from_bytes(hashlib.sha256(b"manual").digest()[:8], "big") % 3
    assert {shard_of(f"doc-{i}", 3) for i in range(50)} == {0, 1, 2}
    assert shard_of("x", 1) == 0


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_a_shard_scores_every_chunk_as_the_whole_index_does(single, tmp_path, shards):
    """Every question: the merged shards' top list is the whole index's, scores to the bit."""
    index = EmbeddedStore(single).read()
    report = shard_index(index, shards, tmp_path / "sharded")
    assert sum(report.chunks) == len(index.chunks) and sum(report.documents) == len(index.documents)
    servers = [ShardServer(str(tmp_path / "sharded" / f), report.build) for f in report.folders]
    c = index.config
    whole = BM25(index.counts, c.bm25.k1, c.bm25.b)
    for q in QUESTIONS:
        tokens = index.analyzer(q)
        want = top_k(whole.score_all(tokens), 100)
        got = merge_tops([s.search(tokens, 100, c.bm25.k1, c.bm25.b) for s in servers], 100)
        assert want[0].tolist() == got[0].tolist() and np.array_equal(want[1], got[1])
        # at other k1 and b too (weights computed by the shard, with the whole index's statistics)
        other = BM25(index.counts, 1.2, 0.75)
        assert merge_tops([s.search(tokens, 5, 1.2, 0.75) for s in servers], 5)[0].tolist() == \
            top_k(other.score_all(tokens), 5)[0].tolist()


def test_a_shard_holds_the_whole_index_statistics(single, tmp_path):
    index = EmbeddedStore(single).read()
    report = shard_index(index, 2, tmp_path / "sharded")
    stats = CorpusStats.of(index.counts)
    for folder in report.folders:
        part = EmbeddedStore(tmp_path / "sharded" / folder).read().parts["shard"]
        assert (part.params["n_docs"], part.params["avgdl"]) == (stats.n_docs, stats.avgdl)
        assert np.array_equal(part.arrays["doc_freq"], stats.doc_freq)
        assert part.params["build"] == report.build
    catalogue = EmbeddedStore(tmp_path / "sharded").read()
    assert catalogue.parts["shards"].params["folders"] == ["shards/000", "shards/001"]
    assert catalogue.config.retrieve.retrievers == ["ray-bm25"] and "bm25" not in catalogue.config.retrieve.observe
    assert len(catalogue.chunks) == len(index.chunks)


def test_sharding_again_with_fewer_shards_removes_the_others(single, tmp_path):
    index = EmbeddedStore(single).read()
    shard_index(index, 3, tmp_path / "sharded")
    shard_index(index, 2, tmp_path / "sharded")
    assert sorted(p.name for p in (tmp_path / "sharded" / "shards").iterdir()) == ["000", "001"]


def test_a_shard_of_another_sharding_refuses(single, tmp_path):
    index = EmbeddedStore(single).read()
    shard_index(index, 2, tmp_path / "sharded")
    server = ShardServer(str(tmp_path / "sharded" / "shards" / "000"), "another")
    assert server.where()["problem"] and "written by sharding" in server.where()["problem"][0]
    with pytest.raises(ShardError, match="shard the index again"):
        server.search(["sensor"], 5, 0.9, 0.4)


def test_what_cannot_be_sharded_says_what_to_do(single, tmp_path):
    index = EmbeddedStore(single).read()
    with pytest.raises(ConfigError, match="at least one shard"):
        shard_index(index, 0, tmp_path / "a")
    with pytest.raises(ConfigError, match="is the index being sharded"):
        shard_index(index, 2, single)
    shard_index(index, 2, tmp_path / "sharded")
    with pytest.raises(ConfigError, match="already a sharded index"):
        shard_index(EmbeddedStore(tmp_path / "sharded").read(), 2, tmp_path / "b")
    other = tmp_path / "other"
    EmbeddedStore(other).write(index)
    with pytest.raises(StoreError, match="not a sharded one"):  # another index is never replaced
        shard_index(index, 2, other)


def test_the_sharded_retriever_on_an_index_that_is_not_sharded_says_so(single):
    index = EmbeddedStore(single).read()
    with pytest.raises(ConfigError, match="not one") as refused:
        make_retriever("ray-bm25", index, index.config, BM25(index.counts))
    assert "glassrag shard" in refused.value.hint


def test_without_ray_a_question_is_an_error_saying_how_to_install_it(single, tmp_path, monkeypatch):
    index = EmbeddedStore(single).read()
    shard_index(index, 2, tmp_path / "sharded")
    catalogue = EmbeddedStore(tmp_path / "sharded").read()
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    retriever = make_retriever("ray-bm25", catalogue, catalogue.config, BM25(catalogue.counts))
    with pytest.raises(ShardError, match="needs Ray") as failed:
        retriever.apply(Query("sensor", ["sensor"]), [])
    assert "pip install 'glassrag[ray]'" in failed.value.hint and failed.value.exit_code == 8


def test_glassrag_shard_prints_each_shard(single, tmp_path, capsys):
    assert main(["shard", "--index", str(single), "--shards", "2", "--out", str(tmp_path / "s")]) == 0
    printed = capsys.readouterr().out
    assert "shards/000" in printed and "shards/001" in printed and "--index" in printed
    assert main(["shard", "--index", str(single), "--shards", "0", "--out", str(tmp_path / "t")]) == 2


def test_without_ray_glassrag_ask_exits_8_saying_how_to_install_it(single, tmp_path, monkeypatch, capsys):
    """The command's view of the same: exit 8 (ShardError) and the install line, no traceback."""
    shard_index(EmbeddedStore(single).read(), 2, tmp_path / "sharded")
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.delenv("GLASSRAG_RAY", raising=False)
    assert main(["ask", "What does E-4107 mean?", "--index", str(tmp_path / "sharded")]) == 8
    printed = capsys.readouterr().err
    assert "needs Ray, which is not installed" in printed and "pip install 'glassrag[ray]'" in printed
    assert "Traceback" not in printed
