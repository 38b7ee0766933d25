"""A sharded index searched on a real local 3-node Ray cluster (tests/ray/conftest.py): its BM25
top lists are the single index's, scores and ties included, on SciFact's 300 test queries and the
demo; per-shard statistics would not be; a shard killed mid-question is an error that names it,
never a ranking of the other shards alone; the CLI asks and evaluates over it."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from glassrag.cli import main
from glassrag.demo import demo_golden, demo_questions
from glassrag.errors import ShardError
from glassrag.evaluate.questions import load_questions
from glassrag.evaluate.runs import evaluate
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import RETRIEVERS, make_retriever
from glassrag.shard import serve, shard_index
from glassrag.shard.serve import ShardServer, merge_tops
from glassrag.store import EmbeddedStore
from tests.ray.conftest import SCIFACT, killed_mid_question
from tests.stage_contract import check_entry


def retriever(index, name: str):
    c = index.config
    return make_retriever(name, index, c, BM25(index.counts, c.bm25.k1, c.bm25.b, index.bm25_weights(c.bm25.k1, c.bm25.b)))


def scifact_test_queries() -> list[str]:
    texts = {}
    for line in (SCIFACT / "queries.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            texts[q["_id"]] = q["text"]
    ids = dict.fromkeys(line.split("\t")[0] for line in
                        (SCIFACT / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:] if line.strip())
    return [texts[q] for q in ids]


def shown(answer: dict) -> tuple:
    """What an answer shows: its passage, what else was found, and whether it was declined."""
    return ([p["chunk_id"] for p in [answer["passage"] or {"chunk_id": None}, *answer["also_found"]]],
            answer["declined"], answer["reason"])


def listed(hits) -> list[tuple[str, float]]:
    return [(h.chunk_id, h.score) for h in hits]


def test_sharded_bm25_equals_the_single_index_on_scifact(cluster, scifact_shards):
    """All 300 test queries: the whole top list (depth 100, so the top 10 too) equal, scores to the
    bit, and the three shards served from three different nodes."""
    single, catalogue = (EmbeddedStore(p).read() for p in scifact_shards)
    local, sharded = retriever(single, "bm25"), retriever(catalogue, "ray-bm25")
    queries = scifact_test_queries()
    assert len(queries) == 300
    same = 0
    for q in queries:
        tokens = single.analyzer(q)
        want, _ = local.apply(Query(q, tokens), [])
        got, notes = sharded.apply(Query(q, tokens), [])
        same += listed(got) == listed(want)
        assert listed(got[:10]) == listed(want[:10]), q
    assert same == 300
    assert "3 shards searched on Ray" in notes[0]
    where = serve.pool(sharded.folder, sharded.shards).where()
    assert len({w["node"] for w in where}) == 3 and sum(w["chunks"] for w in where) == len(single.chunks)


def test_per_shard_statistics_would_change_the_top_10(scifact_shards):
    """The guard: each shard's own N, avgdl and n(t) (what most engines use by default) give
    another top 10 for most queries; the global statistics give the single index's for all."""
    single, catalogue = (EmbeddedStore(p).read() for p in scifact_shards)
    params = catalogue.parts["shards"].params
    servers = [ShardServer(str(scifact_shards[1] / f), params["build"]) for f in params["folders"]]
    k1, b = single.config.bm25.k1, single.config.bm25.b
    whole = BM25(single.counts, k1, b)
    own = [BM25(s.index.counts, k1, b) for s in servers]  # each shard's own statistics
    differ = same = 0
    for q in scifact_test_queries():
        tokens = single.analyzer(q)
        want = top_k(whole.score_all(tokens), 10)[0].tolist()
        by_own = merge_tops([(s.rows[i], v) for s, m in zip(servers, own)
                             for i, v in [top_k(m.score_all(tokens), 10)]], 10)[0].tolist()
        by_global = merge_tops([s.search(tokens, 10, k1, b) for s in servers], 10)[0].tolist()
        differ += by_own != want
        same += by_global == want
    assert same == 300
    assert differ >= 250  # 281 of 300 measured (issue 48)


def test_every_document_is_whole_on_one_shard_and_the_shards_partition_the_index(demo_shards):
    single, catalogue = (EmbeddedStore(p).read() for p in demo_shards)
    params = catalogue.parts["shards"].params
    rows, owner = [], {}
    for i, folder in enumerate(params["folders"]):
        shard = EmbeddedStore(demo_shards[1] / folder).read()
        part = shard.parts["shard"]
        rows += part.arrays["rows"].tolist()
        for r, chunk in zip(part.arrays["rows"].tolist(), shard.chunks):
            assert chunk == single.chunks[r]
            assert owner.setdefault(chunk.doc_id, i) == i
        # its stored weights are the whole index's for the same counts, bit for bit
        whole = single.bm25_weights(single.config.bm25.k1, single.config.bm25.b)
        full = single.counts.tf.tocsr()[part.arrays["rows"]].tocsc()
        full.data = np.asarray(whole)[_positions(single, part.arrays["rows"])]
        assert np.array_equal(shard.bm25_weights(shard.config.bm25.k1, shard.config.bm25.b),
                              full.sorted_indices().data)
    assert sorted(rows) == list(range(len(single.chunks)))
    assert max(single.chunks_in(d) for d in owner) > 1  # documents of several chunks were kept whole


def _positions(index, rows: np.ndarray) -> np.ndarray:
    """For each stored count of `rows` (CSR order), its position in the whole index's CSC data."""
    tf = index.counts.tf.copy()
    tf.data = np.arange(tf.nnz, dtype=np.float64)
    return tf.tocsr()[rows].tocsc().sorted_indices().data.astype(np.int64)


def test_ask_and_eval_over_the_sharded_demo_equal_the_single_index(cluster, demo_shards):
    """Fusion, rerank, gate and answer run on the driver: every answer's passages and the run's
    metrics are the single index's; the trace shows ray-bm25 with bm25's hits."""
    single, catalogue = (EmbeddedStore(p).read() for p in demo_shards)
    assert catalogue.config.retrieve.retrievers == ["ray-bm25"]
    one, many = Pipeline(single), Pipeline(catalogue)
    for q in demo_questions():
        a, b = one.run(q), many.run(q)
        assert shown(a.to_dict()) == shown(b.to_dict())
        local, = [t for t in a.trace if t.name == "bm25"]
        shards, = [t for t in b.trace if t.name == "ray-bm25"]
        assert listed(local.hits) == listed(shards.hits) and shards.params["shards"] == 3
    questions = load_questions(demo_golden(), "test", single.documents)
    x, y = evaluate(Pipeline(single), questions), evaluate(Pipeline(catalogue), questions)
    assert x.ranking.to_dict() == y.ranking.to_dict() and x.answer.to_dict() == y.answer.to_dict()


def test_the_sharded_retriever_meets_the_stage_contract(cluster, demo_shards):
    check_entry(EmbeddedStore(demo_shards[1]).read(), "retrieve", "ray-bm25", RETRIEVERS["ray-bm25"],
                "what does E-4107 mean?")


def test_a_shard_killed_mid_question_is_an_error_naming_it(cluster, demo_shards):
    """Shard 1's process is stopped, a question is sent, and the process is killed while the
    question waits on it: the question fails with ShardError naming shard 1 (the other shards
    answered; no ranking is made of theirs alone); the next question starts new actors."""
    catalogue = EmbeddedStore(demo_shards[1]).read()
    sharded = retriever(catalogue, "ray-bm25")
    q = "What does E-4107 mean?"
    query = lambda: Query(q, catalogue.analyzer(q))  # noqa: E731
    before, _ = sharded.apply(query(), [])
    failed = killed_mid_question(sharded, lambda: sharded.apply(query(), []))
    assert failed.shard == 1 and "shard 1" in str(failed) and "shards/001" in str(failed)
    after, _ = sharded.apply(query(), [])
    assert listed(after) == listed(before)


def test_a_shard_of_another_sharding_refuses_to_serve(cluster, demo_shards, tmp_path):
    """Shard 1 replaced by the shard 1 of another sharding of the same index (other statistics
    could be in it): the first question fails with ShardError naming shard 1."""
    source = EmbeddedStore(demo_shards[0]).read()
    shard_index(source, 3, tmp_path / "a")
    shard_index(source, 3, tmp_path / "b")
    import shutil

    shutil.rmtree(tmp_path / "a" / "shards" / "001")
    shutil.copytree(tmp_path / "b" / "shards" / "001", tmp_path / "a" / "shards" / "001")
    sharded = retriever(EmbeddedStore(tmp_path / "a").read(), "ray-bm25")
    with pytest.raises(ShardError, match="written by sharding") as failed:
        sharded.apply(Query("sensor", ["sensor"]), [])
    assert failed.value.shard == 1


def test_the_cluster_listens_on_loopback_only(cluster):
    psutil = pytest.importorskip("psutil")
    ours = {os.getpid(), *(p.pid for p in psutil.Process().children(recursive=True))}
    listening = [c for c in psutil.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN and c.pid in ours]
    addresses = {ipaddress.ip_address(c.laddr.ip) for c in listening}
    assert addresses and all((a.ipv4_mapped or a).is_loopback for a in addresses if a.version == 6) \
        and all(a.is_loopback for a in addresses if a.version == 4), addresses


def test_the_cli_shards_asks_and_evaluates(cluster, demo_shards, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GLASSRAG_RAY", "")  # what --ray sets is undone after the test
    out = tmp_path / "sharded"
    assert main(["shard", "--index", str(demo_shards[0]), "--shards", "2", "--out", str(out)]) == 0
    assert "shards/001" in capsys.readouterr().out
    q = "What does E-4107 mean?"
    assert main(["ask", q, "--index", str(demo_shards[0]), "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["ask", q, "--index", str(out), "--ray", cluster.address, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert shown(got) == shown(want) and got["passage"]
    assert any(t["name"] == "ray-bm25" for t in got["trace"])
    assert main(["eval", "--index", str(out), "--golden", str(demo_golden()), "--no-calibrate",
                 "--out", str(tmp_path / "run.json")]) == 0
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["stages"] and "ray-bm25" in run["stages"]


def cli(*args: str) -> subprocess.CompletedProcess:
    """`glassrag ARGS` in a new process, with none of the variables Ray set in this one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "GLASSRAG_RAY"}
    return subprocess.run([sys.executable, "-m", "glassrag.cli", *args], env={**env, "HF_HUB_OFFLINE": "1"},
                          capture_output=True, text=True, timeout=300)


def test_another_process_asks_on_the_running_cluster_by_its_loopback_address(cluster, demo_shards):
    """`--ray 127.0.0.1:PORT` from a new process joins the running cluster (Ray would rewrite
    127.0.0.1 to the interface's address, where nothing listens, and retry for minutes)."""
    done = cli("ask", "What does E-4107 mean?", "--index", str(demo_shards[1]), "--ray", cluster.address, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert any(t["name"] == "ray-bm25" and t["hits"] for t in json.loads(done.stdout)["trace"])


def test_an_unreachable_cluster_is_an_error_at_once(demo_shards):
    started = time.monotonic()
    done = cli("ask", "What does E-4107 mean?", "--index", str(demo_shards[1]), "--ray", "127.0.0.1:9")
    assert done.returncode == 8 and "cannot reach the Ray cluster at 127.0.0.1:9" in done.stderr, done.stderr
    assert time.monotonic() - started < 60
    done = cli("ask", "What does E-4107 mean?", "--index", str(demo_shards[1]), "--ray", "nowhere")
    assert done.returncode == 8 and "is not HOST:PORT" in done.stderr, done.stderr
