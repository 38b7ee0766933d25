"""Dense search over a sharded index on the local 3-node cluster (tests/ray/conftest.py), with
MiniLM's real vectors of the demo handbook: `ray-minilm`'s list is the in-process `minilm`
list (ids and order; cosines to the last bit or two, as BLAS blocks rows by where they sit), the
hybrid fused on the driver is the single index's, the retriever meets the stage contract, and a
shard killed mid-question is an error naming it, never a ranking of the other shards."""

from __future__ import annotations

import numpy as np

from glassrag.demo import demo_golden, demo_questions
from glassrag.evaluate.questions import load_questions
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import make_retriever, offered
from glassrag.retrieve.shards import dense_entry
from glassrag.shard import serve
from glassrag.store import EmbeddedStore
from tests.ray.conftest import killed_mid_question
from tests.stage_contract import check_entry

ULPS = 2.4e-7  # two float32 steps below 1: BLAS may add a row's products in another order on a shard


def retriever(index, name: str):
    c = index.config
    return make_retriever(name, index, c, BM25(index.counts, c.bm25.k1, c.bm25.b))


def questions(index) -> list[str]:
    """The demo's questions and every golden question (both splits): 40-odd."""
    golden = [q.question for split in ("train", "test") for q in load_questions(demo_golden(), split, index.documents)]
    return list(dict.fromkeys([*demo_questions(), *golden]))


def test_sharded_dense_lists_equal_the_single_index(cluster, demo_dense_shards):
    """Every question: ray-minilm's top 10 is the in-process minilm top 10, ids and order; down
    its whole list (depth 100) each rank's cosine is within two float32 steps of the single
    index's, and a chunk differs only where its cosine and the single index's chunk's lie that
    close: a near tie BLAS's order of addition may turn, or a tie at rank 100 (4 of 145 lists when
    written: chunks of equal cosine there, which the single index's argpartition picks among
    either way, the merge by lower row); the shards are served from three nodes and hold every
    chunk's vector once."""
    single, catalogue = (EmbeddedStore(p).read() for p in demo_dense_shards)
    assert catalogue.config.retrieve.retrievers == ["ray-bm25", "ray-minilm"]
    assert "ray-minilm" in offered(catalogue) and "ray-minilm" not in offered(single)
    local, sharded = retriever(single, "minilm"), retriever(catalogue, "ray-minilm")
    asked = questions(single)
    assert len(asked) >= 20
    for q in asked:
        want, _ = local.apply(Query(q, single.analyzer(q)), [])
        got, notes = sharded.apply(Query(q, catalogue.analyzer(q)), [])
        assert [h.chunk_id for h in got[:10]] == [h.chunk_id for h in want[:10]], q
        assert len(got) == len(want) == 100
        assert np.abs(np.array([h.score for h in got]) - [h.score for h in want]).max() <= ULPS, q
        for g, w in zip(got, want):
            if g.chunk_id != w.chunk_id:  # a near tie: the single index's own cosines of both are that close
                a, b = local_cosines(local, single, q, [g.chunk_id, w.chunk_id])
                assert abs(a - b) <= ULPS, (q, g, w)
    assert "3 shards searched on Ray" in notes[0] and "by cosine" in notes[0]
    where = serve.pool(sharded.folder, sharded.shards).where()
    assert len({w["node"] for w in where}) == 3 and sum(w["chunks"] for w in where) == len(single.chunks)


def local_cosines(local, index, q: str, ids: list[str]) -> list[float]:
    """The single index's own cosines of chunks `ids` with question `q` (its every-chunk scores)."""
    query = Query(q, index.analyzer(q))
    local.apply(query, [])
    return [float(x) for x in local.score_source(query).score(ids)]


def fused(answer) -> list[str]:
    trace, = [t for t in answer.trace if t.kind == "fuse"]
    return [h.chunk_id for h in trace.hits]


def test_the_hybrid_fused_on_the_driver_equals_the_single_index(cluster, demo_dense_shards):
    """BM25 and MiniLM fused by RRF (the default) and by weighted fusion (which reads each
    retriever's score of chunks outside its list, ranged over the whole corpus: the shards'
    lowest and highest cosines): the fused top 10 and what the answer shows are the single
    index's (further down, a tie at the dense list's rank 100 may bring in another chunk)."""
    single, catalogue = (EmbeddedStore(p).read() for p in demo_dense_shards)
    for method in ("rrf", "weighted"):
        one = Pipeline(single, single.config.with_overrides(fuse={"method": method}))
        many = Pipeline(catalogue, catalogue.config.with_overrides(fuse={"method": method}))
        for q in questions(single):
            a, b = one.run(q), many.run(q)
            assert fused(a)[:10] == fused(b)[:10], (method, q)
            assert (a.passage and a.passage.chunk_id, [p.chunk_id for p in a.also_found], a.declined) == \
                (b.passage and b.passage.chunk_id, [p.chunk_id for p in b.also_found], b.declined), (method, q)
        names = [t.name for t in b.trace if t.kind == "retrieve"]
        assert names == ["ray-bm25", "ray-minilm"]


def test_the_sharded_dense_retriever_meets_the_stage_contract(cluster, demo_dense_shards):
    check_entry(EmbeddedStore(demo_dense_shards[1]).read(), "retrieve", "ray-minilm", dense_entry("minilm"),
                "what does E-4107 mean?")


def test_a_dense_shard_killed_mid_question_is_an_error_naming_it(cluster, demo_dense_shards):
    catalogue = EmbeddedStore(demo_dense_shards[1]).read()
    sharded = retriever(catalogue, "ray-minilm")
    q = "Can I keep holiday I didn't take?"
    before, _ = sharded.apply(Query(q, catalogue.analyzer(q)), [])
    failed = killed_mid_question(sharded, lambda: sharded.apply(Query(q, catalogue.analyzer(q)), []), shard=2)
    assert failed.shard == 2 and "shards/002" in str(failed) and "no ranking was made" in failed.hint
    after, _ = sharded.apply(Query(q, catalogue.analyzer(q)), [])
    assert [(h.chunk_id, h.score) for h in after] == [(h.chunk_id, h.score) for h in before]
