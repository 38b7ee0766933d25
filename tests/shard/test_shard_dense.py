"""Dense search on shards, in-process (no Ray: tests/ray/ runs it on a cluster with MiniLM):
each shard holds its rows of an embedder's vectors, and the shards' merged top k by cosine is
the whole index's exact top k; `glassrag serve` over a sharded index without a cluster runs one
process."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from glassrag.cli.shard import serve_processes
from glassrag.config import Config
from glassrag.dense.exact import ExactCosine
from glassrag.errors import ConfigError
from glassrag.indexer import build_index
from glassrag.lexical.bm25 import BM25
from glassrag.retrieve import make_retriever, offered, retrievers
from glassrag.shard import shard_index
from glassrag.shard.serve import ShardServer, merge_tops
from glassrag.store import EmbeddedStore
from glassrag.store.base import Embedded
from tests.conftest import HANDBOOK, write_corpus

ULPS = 2.4e-7  # two float32 steps below 1 (BLAS adds a row's products in an order set by its place)


@pytest.fixture(scope="module")
def with_vectors(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handbook's index with a made-up embedder's vectors (seeded, 16 dimensions), fused
    with BM25: the shards' search is about the vectors, not the model that made them."""
    folder = tmp_path_factory.mktemp("shard-dense")
    index, report = build_index([write_corpus(folder / "docs", HANDBOOK)], Config())
    assert not report.failed
    vectors = np.random.default_rng(7).standard_normal((len(index.chunks), 16)).astype(np.float32)
    config = index.config.updated({"retrieve": {"retrievers": ["bm25", "made"]}}, "test", "flag")
    EmbeddedStore(folder / "single").write(replace(index, config=config,
                                                   embeddings={"made": Embedded("made", {"model": "made"}, vectors)}))
    return folder / "single"


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_the_shards_merged_top_k_by_cosine_is_the_whole_index(with_vectors, tmp_path, shards):
    index = EmbeddedStore(with_vectors).read()
    report = shard_index(index, shards, tmp_path / "sharded")
    servers = [ShardServer(str(tmp_path / "sharded" / f), report.build) for f in report.folders]
    whole = ExactCosine(index.embeddings["made"].vectors)
    held = [s.index.embeddings["made"].vectors for s in servers]
    assert sum(len(v) for v in held) == len(index.chunks)
    for s, v in zip(servers, held):  # each shard's rows of the vectors, in its rows' order
        assert np.array_equal(v, np.asarray(index.embeddings["made"].vectors)[s.rows])
    for seed in range(20):
        q = np.random.default_rng(seed).standard_normal(16).astype(np.float32)
        sims = whole.similarities(q)
        want_rows, want_scores, _ = whole.top(sims, 10)
        tops = [s.dense("made", q, 10) for s in servers]
        rows, scores = merge_tops([(r, c) for r, c, _, _ in tops], 10)
        assert rows.tolist() == want_rows.tolist()
        assert np.abs(scores - want_scores).max() <= ULPS
        # the corpus-wide range weighted fusion normalises by: the shards' lowest and highest
        assert abs(min(t[2] for t in tops) - sims.min()) <= ULPS and abs(max(t[3] for t in tops) - sims.max()) <= ULPS
    zero = [s.dense("made", np.zeros(16, dtype=np.float32), 10) for s in servers]
    assert all(r.size == 0 for r, _, _, _ in zero)  # no known word: compares with nothing, as one index


def test_the_catalogue_fuses_the_embedders_sharded_retriever(with_vectors, tmp_path):
    index = EmbeddedStore(with_vectors).read()
    shard_index(index, 2, tmp_path / "sharded")
    catalogue = EmbeddedStore(tmp_path / "sharded").read()
    assert catalogue.config.retrieve.retrievers == ["ray-bm25", "ray-made"]
    assert "ray-made" in retrievers(catalogue) and "ray-made" in offered(catalogue)  # its table has it, and it runs there
    assert "ray-made" not in offered(index)  # the whole index's table has it too, and it cannot run there
    made = make_retriever("ray-made", catalogue, catalogue.config, BM25(catalogue.counts))
    assert made.name == "ray-made" and made.searched == len(index.chunks)


def test_the_sharded_dense_retriever_on_an_index_that_is_not_sharded_says_so(with_vectors):
    index = EmbeddedStore(with_vectors).read()
    with pytest.raises(ConfigError, match="not one") as refused:
        make_retriever("ray-made", index, index.config, BM25(index.counts))
    assert "glassrag shard" in refused.value.hint


def test_a_shard_without_the_embedder_says_so(with_vectors, tmp_path):
    index = EmbeddedStore(with_vectors).read()
    report = shard_index(index, 2, tmp_path / "sharded")
    server = ShardServer(str(tmp_path / "sharded" / report.folders[0]), report.build)
    with pytest.raises(Exception, match="no vectors of embedder 'other'"):
        server.dense("other", np.ones(16, dtype=np.float32), 5)


def test_serve_over_a_sharded_index_without_a_cluster_runs_one_process(with_vectors, tmp_path, monkeypatch, capsys):
    """Each forked worker would start a Ray cluster of its own: one process, and why; with an
    address (--ray sets GLASSRAG_RAY) or an index that is not sharded, the workers asked for."""
    shard_index(EmbeddedStore(with_vectors).read(), 2, tmp_path / "sharded")
    monkeypatch.delenv("GLASSRAG_RAY", raising=False)
    assert serve_processes([tmp_path / "sharded"], 2) == 1
    assert "no --ray address" in capsys.readouterr().err
    assert serve_processes([with_vectors], 2) == 2 and serve_processes([tmp_path / "sharded"], 1) == 1
    monkeypatch.setenv("GLASSRAG_RAY", "127.0.0.1:6379")
    assert serve_processes([tmp_path / "sharded"], 2) == 2


def test_an_ingest_into_a_dense_catalogue_gets_back_the_in_process_retrievers():
    """`unsharded` (what `glassrag ingest --ray` into a catalogue builds the whole index with)
    undoes `sharded_retrievers` for the dense retrievers too: ray-made back to made, as ray-bm25
    to bm25 (before the merge it kept ray-made, a retriever a whole index cannot run)."""
    from glassrag.shard.build import sharded_retrievers, unsharded

    config = Config().updated({"retrieve": {"retrievers": ["bm25", "made"], "observe": ["made"]}}, "test", "flag")
    sharded = sharded_retrievers(config, "test", ("made",))
    assert (sharded.retrieve.retrievers, sharded.retrieve.observe) == (["ray-bm25", "ray-made"], ["ray-made"])
    whole = unsharded(sharded, "test")
    assert (whole.retrieve.retrievers, whole.retrieve.observe) == (["bm25", "made"], ["made"])


def test_an_embedder_record_this_version_cannot_read_is_refused_not_a_crash(with_vectors):
    """The fixture's embedder "made" records only its model name: its neural retriever cannot
    say how to embed a question, so its entry refuses with a reason, and asking what the index
    offers does not raise (it did, with KeyError 'quantize', once the table asked every entry)."""
    from glassrag.retrieve.neural import refusal

    index = EmbeddedStore(with_vectors).read()
    why = refusal(index, "made")
    assert why is not None and "cannot be read (KeyError" in why.problem and "--embedder made" in why.hint
    assert "made" not in offered(index) and "bm25" in offered(index)
