"""`glassrag ingest --ray --shards N` on a real local 3-node Ray cluster (tests/ray/conftest.py):
reading, chunking, analysing and embedding run on the cluster's workers, each shard is written by
its own worker, and the result is what one process would have made, file for file: the whole
index (chunks, term counts, LSA, MiniLM vectors) and every shard (`glassrag shard` of the
one-machine index). A driver killed between the shards' writes and the catalogue's swap leaves
every shard at its previous state; a re-ingest after one document changed reads, analyses and
embeds that document only."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from glassrag.cli import main
from glassrag.config import Config
from glassrag.demo import demo_docs
from glassrag.errors import ConfigError
from glassrag.indexer import build_index, with_embedder
from glassrag.query import Query
from glassrag.shard.ingest import RayWork
from glassrag.store import EmbeddedStore
from tests.ray.conftest import SCIFACT
from tests.ray.test_ray_shards import listed, retriever, scifact_test_queries


def same_whole_index(a, b) -> None:
    """Two whole indexes hold the same documents, chunks, term counts, LSA and vectors, bit for bit."""
    assert list(a.documents) == list(b.documents)
    assert [c.to_dict() for c in a.chunks] == [c.to_dict() for c in b.chunks]
    assert a.counts.vocab == b.counts.vocab
    for x, y in ((a.counts.columns, b.counts.columns),):
        assert np.array_equal(x.indptr, y.indptr) and np.array_equal(x.indices, y.indices) \
            and np.array_equal(x.data, y.data)
    assert np.array_equal(a.counts.doc_len, b.counts.doc_len)
    assert (a.lsa is None) == (b.lsa is None)
    if a.lsa is not None:
        assert np.array_equal(a.lsa.passage_vectors, b.lsa.passage_vectors)
        assert np.array_equal(a.lsa.term_vectors, b.lsa.term_vectors) and a.lsa.params() == b.lsa.params()
    assert set(a.embeddings) == set(b.embeddings)
    for name in a.embeddings:
        assert np.array_equal(a.embeddings[name].vectors, b.embeddings[name].vectors), name


def same_shards(ingested: Path, sharded: Path) -> None:
    """Shard i of the cluster ingest holds what shard i of `glassrag shard` holds: documents,
    chunks, term counts, stored BM25 weights, catalogue rows and the whole index's statistics."""
    mine, theirs = (EmbeddedStore(p).read().parts["shards"].params for p in (ingested, sharded))
    assert mine["shards"] == theirs["shards"]
    for f, g in zip(mine["folders"], theirs["folders"]):
        a, b = EmbeddedStore(ingested / f).read(), EmbeddedStore(sharded / g).read()
        assert list(a.documents) == list(b.documents) and [c.id for c in a.chunks] == [c.id for c in b.chunks]
        assert np.array_equal(a.counts.columns.data, b.counts.columns.data)
        assert np.array_equal(a.counts.columns.indices, b.counts.columns.indices)
        k1, b1 = a.config.bm25.k1, a.config.bm25.b
        assert np.array_equal(a.bm25_weights(k1, b1), b.bm25_weights(k1, b1))
        p, q = a.parts["shard"], b.parts["shard"]
        assert {k: v for k, v in p.params.items() if k != "build"} == {k: v for k, v in q.params.items() if k != "build"}
        assert all(np.array_equal(p.arrays[k], q.arrays[k]) for k in ("rows", "doc_freq"))
        assert a.config.retrieve.retrievers == b.config.retrieve.retrievers == ["bm25"]


def test_a_sharded_ingest_of_scifact_is_the_single_index_sharded(cluster, scifact_shards, tmp_path, capsys):
    """`glassrag ingest SCIFACT --ray ADDRESS --shards 3`: the whole index is the one-machine
    ingest's (LSA included), each shard is `glassrag shard`'s, and ray-bm25's list equals the
    single index's for all 300 test queries, scores to the bit."""
    out = tmp_path / "ray"
    assert main(["ingest", str(SCIFACT), "--index", str(out), "--ray", cluster.address, "--shards", "3"]) == 0
    assert "shards/" in capsys.readouterr().out
    single, catalogue = EmbeddedStore(scifact_shards[0]).read(), EmbeddedStore(out).read()
    same_whole_index(single, catalogue)
    assert catalogue.config.retrieve.retrievers == ["ray-bm25"]
    same_shards(out, scifact_shards[1])
    local, sharded = retriever(single, "bm25"), retriever(catalogue, "ray-bm25")
    same = 0
    for q in scifact_test_queries():
        query = Query(q, single.analyzer(q))
        same += listed(sharded.apply(query, [])[0]) == listed(local.apply(query, [])[0])
    assert same == 300
    assert sorted(p.name for p in (out / "shards").iterdir()) == [catalogue.parts["shards"].params["build"]]


def small_corpus(folder: Path) -> Path:
    """Four demo documents (Markdown and a spreadsheet), copied to be changed."""
    folder.mkdir()
    for name in ("faq.md", "glossary.md", "it-security.md", "price-list.xlsx"):
        shutil.copy(demo_docs() / name, folder / name)
    return folder


def test_vectors_and_the_whole_index_from_the_cluster_equal_one_process(cluster, tmp_path):
    """Files read and chunked, chunks analysed and MiniLM-embedded by the cluster's workers: the
    same documents, counts, LSA and vectors as one process, bit for bit; every vector was embedded
    on the cluster."""
    import ray

    docs = small_corpus(tmp_path / "docs")
    config = with_embedder(Config(), "minilm")
    try:
        here, _ = build_index([docs], config, cache_dir=tmp_path / "here")
    except ConfigError as err:
        pytest.skip(f"MiniLM cannot run here: {err}")
    work = RayWork(ray, config)
    try:
        assert len({w["node"] for w in work.where()}) == 3
        there, report = build_index([docs], config, cache_dir=tmp_path / "there", work=work)
    finally:
        work.close()
    same_whole_index(here, there)
    n = len(there.chunks)
    assert work.counted["read"] == 4 and work.counted["analysed"] == n
    assert work.counted["embedded"] == {"minilm": n} and report.embedded["minilm"] == {"embedded": n, "from cache": 0}


def cli(*args: str) -> subprocess.Popen:
    """`glassrag ARGS` in a new process (its own group), with none of Ray's variables of this one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "GLASSRAG_RAY"}
    return subprocess.Popen([sys.executable, "-m", "glassrag.cli", *args], env={**env, "HF_HUB_OFFLINE": "1"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def state(index: Path) -> dict[str, str]:
    """The live generation of the catalogue and of every shard it names."""
    folders = EmbeddedStore(index).read().parts["shards"].params["folders"]
    return {".": (index / "CURRENT").read_text(), **{f: (index / f / "CURRENT").read_text() for f in folders}}


def answers(index: Path, question: str) -> list:
    catalogue = EmbeddedStore(index).read()
    return listed(retriever(catalogue, "ray-bm25").apply(Query(question, catalogue.analyzer(question)), [])[0])


def test_a_driver_killed_after_the_shards_were_written_leaves_every_shard_as_it_was(cluster, tmp_path, capsys):
    """A re-ingest in another process is stopped as soon as its first new shard folder appears,
    left stopped while its workers write the new shards, then killed (SIGKILL) before its
    catalogue's swap: the catalogue and every shard it names are at their previous
    generation and answer as before. The next ingest removes what the killed one left and adds
    the change."""
    docs, index = small_corpus(tmp_path / "docs"), tmp_path / "idx"
    assert main(["ingest", str(docs), "--index", str(index), "--ray", cluster.address, "--shards", "3"]) == 0
    before, build = state(index), EmbeddedStore(index).read().parts["shards"].params["build"]
    question = "zebra quartz protocol"
    asked = answers(index, question)
    (docs / "faq.md").write_text((docs / "faq.md").read_text() + "\n\nThe zebra quartz protocol is new.\n")
    driver = cli("ingest", str(docs), "--index", str(index), "--ray", cluster.address)
    new: list[Path] = []
    try:
        deadline = time.monotonic() + 240
        while not new and driver.poll() is None and time.monotonic() < deadline:
            new = [p for p in (index / "shards").iterdir() if p.name != build and not p.name.startswith(".")]
            time.sleep(0.01)
        assert new, f"no new shard folder appeared: {driver.poll()} {driver.stderr.read().decode()[-2000:] if driver.poll() is not None else ''}"
        os.kill(driver.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all((new[0] / f"{i:03d}" / "CURRENT").is_file() for i in range(3)):
            time.sleep(0.1)
        written = sum((new[0] / f"{i:03d}" / "CURRENT").is_file() for i in range(3))
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait(30)
    assert written >= 1  # new shards were on disk (all three in the runs here), the catalogue not swapped
    assert state(index) == before
    assert answers(index, question) == asked
    assert main(["ingest", str(docs), "--index", str(index), "--ray", cluster.address]) == 0
    assert re.search(r"changed\s+1\b", capsys.readouterr().out)
    live = EmbeddedStore(index).read().parts["shards"].params["build"]
    assert sorted(p.name for p in (index / "shards").iterdir()) == [live] and live != build
    found, catalogue = answers(index, question), EmbeddedStore(index).read()
    assert found and found != asked
    assert catalogue.chunks[catalogue.position[found[0][0]]].doc_id == "faq"


def test_a_re_ingest_after_one_document_changed_works_on_that_document_only(cluster, tmp_path):
    """The previous index's content hashes go to the workers: of four files only the changed one
    is read, only its chunks are analysed and embedded; the result equals one process's
    incremental ingest."""
    import ray

    docs = small_corpus(tmp_path / "docs")
    config = Config()
    first, _ = build_index([docs], config, cache_dir=tmp_path / "cache")
    EmbeddedStore(tmp_path / "idx").write(first)
    previous = EmbeddedStore(tmp_path / "idx").read()
    (docs / "glossary.md").write_text((docs / "glossary.md").read_text() + "\n\nNew term: zebra quartz.\n")
    here, _ = build_index([docs], config, previous, cache_dir=tmp_path / "cache")
    work = RayWork(ray, config)
    try:
        there, report = build_index([docs], config, previous, cache_dir=tmp_path / "cache", work=work)
    finally:
        work.close()
    assert report.changed == ["glossary"] and sorted(report.unchanged) == ["faq", "it-security", "price-list"]
    assert work.counted["read"] == 1
    assert work.counted["analysed"] == there.chunks_in("glossary") < len(there.chunks)
    same_whole_index(here, there)


def test_shards_without_a_folder_index_or_below_one_are_refused(tmp_path, capsys):
    assert main(["ingest", str(demo_docs()), "--index", str(tmp_path / "x"), "--shards", "0"]) == 2
    assert "at least one shard" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_a_worker_killed_mid_ingest_is_an_error_and_nothing_is_written(cluster, tmp_path):
    """One worker's process is stopped, the ingest started (a call waits on it), then the process
    killed: the ingest fails with ShardError saying what it was doing, and the index folder still
    holds its previous generation."""
    import ray

    from glassrag.errors import ShardError

    docs, index = small_corpus(tmp_path / "docs"), tmp_path / "idx"
    config = Config()
    first, _ = build_index([docs], config)
    EmbeddedStore(index).write(first)
    before = (index / "CURRENT").read_text()
    (docs / "faq.md").write_text("changed\n")
    work = RayWork(ray, config)
    try:
        pid = work.where()[0]["pid"]
        os.kill(pid, signal.SIGSTOP)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1) as pool:
            started = pool.submit(build_index, [docs], config, EmbeddedStore(index).read(), work=work)
            time.sleep(2.0)
            assert not started.done()  # waiting on the stopped worker
            os.kill(pid, signal.SIGKILL)
            with pytest.raises(ShardError, match="a worker of the cluster ingest failed while reading files"):
                started.result(timeout=120)
    finally:
        work.close()
    assert (index / "CURRENT").read_text() == before
    assert EmbeddedStore(index).read().documents["faq"].content_hash == first.documents["faq"].content_hash
