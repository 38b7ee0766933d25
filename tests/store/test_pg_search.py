"""The pg-* retrievers against a real server: BM25 in SQL equals glassrag's BM25 on the demo and
on SciFact (from stored impacts: the same chunks in the same order with bit-equal float32 scores;
by the formula at another k1 and b: to 1e-6), exact pgvector search equals exact cosine in numpy, HNSW finds what
exact finds, and the full-text and hybrid retrievers run as observed stages of the trace."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.errors import ConfigError
from glassrag.indexer import build_index
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.retrieve import make_retriever
from glassrag.retrieve.postgres import PgBM25
from glassrag.store import open_store

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"
TOLERANCE = 1e-6


def demo_questions() -> list[str]:
    return [json.loads(line)["question"] for line in demo_golden().read_text(encoding="utf-8").splitlines()
            if line.strip()]


def reference_bm25(counts, tokens: list[str], k1: float, b: float) -> np.ndarray:
    """Every chunk's BM25 (glassrag/lexical/bm25.py's formula) in float64, term by term."""
    tf = counts.tf
    n = tf.shape[0]
    doc_len = np.asarray(counts.doc_len, dtype=np.float64)
    avgdl = doc_len.mean()
    out = np.zeros(n, dtype=np.float64)
    for token in tokens:
        j = counts.vocab.get(token)
        if j is None:
            continue
        rows = tf.indices[tf.indptr[j]:tf.indptr[j + 1]]
        f = np.asarray(tf.data[tf.indptr[j]:tf.indptr[j + 1]], dtype=np.float64)
        df = rows.size
        idf = np.log((n - df + 0.5) / (df + 0.5) + 1.0)
        out[rows] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * doc_len[rows] / avgdl))
    return out


def assert_bm25_parity(embedded, stored, questions: list[str], depth: int = 100) -> int:
    """pg-bm25's scores equal the embedded BM25's (float64 from the same counts) to 1e-6, and
    its ranking is the same wherever neighbouring scores differ by more than that. From stored
    impacts it is exactly the embedded BM25's top `depth`: ids, order and float32 scores."""
    config = stored.config.with_overrides(retrieve={"depth": depth})
    k1, b = config.bm25.k1, config.bm25.b
    ours = BM25(embedded.counts, k1, b)  # float32, as glassrag ranks
    pg = make_retriever("pg-bm25", stored, config, BM25(stored.counts, k1, b))
    from_impacts = pg.impacts() == {"k1": k1, "b": b}
    compared = 0
    for question in questions:
        tokens = embedded.analyzer(question)
        if not tokens:
            continue
        full = reference_bm25(embedded.counts, tokens, k1, b)
        np.testing.assert_allclose(ours.score_all(tokens), full, rtol=1e-6, atol=1e-6)
        hits, notes = pg.apply(Query(question, tokens), [])
        assert ("stored impacts" in notes[0]) == from_impacts
        if from_impacts:
            rows, scores = ours.search(tokens, depth)
            assert [(h.chunk_id, h.score) for h in hits] == \
                [(embedded.chunk_id(int(i)), float(s)) for i, s in zip(rows, scores)], question
        order = np.lexsort((np.arange(full.size), -full))
        expected = [(embedded.chunk_id(int(i)), float(full[i])) for i in order[: depth] if full[i] > 0]
        assert len(hits) == len(expected), question
        for h, (cid, score) in zip(hits, expected):
            assert h.score == pytest.approx(score, rel=TOLERANCE, abs=TOLERANCE), (question, h.rank)
            assert h.score == pytest.approx(float(full[embedded.position[h.chunk_id]]), rel=TOLERANCE,
                                            abs=TOLERANCE)
        scores = [s for _, s in expected]
        for r, (h, (cid, score)) in enumerate(zip(hits, expected)):
            near = [s for s in scores[max(0, r - 1): r + 2] if s != score]
            if all(abs(s - score) > TOLERANCE * max(1.0, score) for s in near) and scores.count(score) == 1:
                assert h.chunk_id == cid, (question, h.rank)
        compared += 1
    return compared


@pytest.fixture(scope="module")
def demo_in_postgres(pg_server):
    from glassrag.store import pgserver

    built, _ = build_index([demo_docs()], Config())
    url = pgserver.url(pg_server, "demo_search")
    open_store(url).write(built)
    return built, open_store(url).read()


def test_pg_bm25_equals_bm25_on_the_demo(demo_in_postgres):
    built, stored = demo_in_postgres
    assert assert_bm25_parity(built, stored, demo_questions()) >= 30


def test_pg_bm25_takes_k1_and_b_at_query_time(demo_in_postgres):
    """At the index's k1 and b from the stored impacts; at others by the formula, equal to 1e-6."""
    built, stored = demo_in_postgres
    assert (stored.config.bm25.k1, stored.config.bm25.b) == (1.5, 0.4)  # the index's: from impacts
    for k1, b in ((1.5, 0.4), (1.2, 0.75), (2.0, 0.0)):
        tuned = stored.config.with_overrides(bm25={"k1": k1, "b": b})
        embedded = type(built)(tuned, built.documents, built.chunks, built.counts, built.lsa)
        again = type(stored)(tuned, stored.documents, stored.chunks, stored.counts, stored.lsa)
        assert assert_bm25_parity(embedded, again, demo_questions()[:10]) == 10


def test_pg_bm25_equals_bm25_on_scifact(pg_server):
    if not SCIFACT.exists():
        pytest.skip(f"SciFact not found at {SCIFACT}")
    from glassrag.store import pgserver

    built, _ = build_index([SCIFACT], Config())
    url = pgserver.url(pg_server, "scifact")
    open_store(url).write(built)
    stored = open_store(url).read()
    queries = [json.loads(line)["text"] for line in (SCIFACT / "queries.jsonl").read_text().splitlines()
               if line.strip()]
    assert assert_bm25_parity(built, stored, queries[::4]) > 250  # every 4th of 1,109 queries


def test_pg_retrievers_refuse_an_index_in_a_folder(index):
    """A folder index's table has no pg-* retriever (retrieve/__init__.py `table`); made
    directly, one still refuses it."""
    with pytest.raises(ConfigError, match="unknown retriever 'pg-bm25'") as refused:
        make_retriever("pg-bm25", index, index.config, BM25(index.counts))
    assert "bm25" in refused.value.hint and "pg-" not in refused.value.hint
    with pytest.raises(ConfigError, match="searches an index in PostgreSQL"):
        PgBM25(index, index.config, BM25(index.counts))


def test_fulltext_retrievers_are_observed_stages_of_the_trace(demo_in_postgres):
    _, stored = demo_in_postgres
    config = stored.config.with_overrides(retrieve={"observe": ["pg-bm25", "pg-fulltext", "pg-fulltext-or"]})
    answer = Pipeline(stored, config).run("what does error E-4107 mean on the fleet server")
    stages = {t.name: t for t in answer.trace}
    assert stages["pg-bm25"].kind == "observe"
    assert [h.chunk_id for h in stages["pg-bm25"].hits] == [h.chunk_id for h in stages["bm25"].hits]
    assert any("tsquery: " in n for n in stages["pg-fulltext"].notes)
    assert "|" in stages["pg-fulltext-or"].notes[0] and "&" in stages["pg-fulltext"].notes[0]
    # ORed words match at least every chunk that all the words match
    assert len(stages["pg-fulltext-or"].hits) >= len(stages["pg-fulltext"].hits)
    assert stages["pg-fulltext-or"].hits


@pytest.fixture(scope="module")
def neural_demo(pg_server):
    pytest.importorskip("sentence_transformers")
    from glassrag.indexer import with_embedder
    from glassrag.store import pgserver

    built, _ = build_index([demo_docs()], with_embedder(Config(), "minilm"))
    url = pgserver.url(pg_server, "demo_dense")
    open_store(url).write(built)
    return built, open_store(url).read()


def test_pg_dense_equals_exact_cosine(neural_demo):
    built, stored = neural_demo
    np.testing.assert_allclose(stored.embeddings["minilm"].vectors, built.embeddings["minilm"].vectors)
    config = stored.config.with_overrides(retrieve={"retrievers": ["minilm"], "observe": ["pg-dense", "pg-hnsw"]})
    pipe = Pipeline(stored, config)
    found = 0
    for question in demo_questions()[:20]:
        stages = {t.name: t for t in pipe.run(question).trace}
        ours, sql = stages["minilm"].hits, stages["pg-dense"].hits
        assert len(ours) == len(sql)
        for a, b in zip(ours, sql):
            assert b.score == pytest.approx(a.score, abs=1e-5)
        sims = [h.score for h in ours]
        # the same chunk at each rank, but where a neighbour ties (within float rounding), and at
        # the last rank (a tie with the first chunk left out is broken by argpartition)
        for r, (a, b) in enumerate(zip(ours[:-1], sql)):
            if all(abs(s - a.score) > 1e-5 for s in sims[max(0, r - 1): r] + sims[r + 1: r + 2]):
                assert a.chunk_id == b.chunk_id
        top = {h.chunk_id for h in sql[:10]}
        found += len(top & {h.chunk_id for h in stages["pg-hnsw"].hits[:10]})
    assert found >= 0.95 * 20 * 10  # HNSW's top 10 holds at least 95 % of exact's


def test_pg_hybrid_is_one_observed_stage_fusing_both_sides(neural_demo):
    _, stored = neural_demo
    config = stored.config.with_overrides(retrieve={"observe": ["pg-hybrid", "pg-fulltext", "pg-hnsw"]})
    stages = {t.name: t for t in Pipeline(stored, config).run("daily allowance for meals abroad").trace}
    hybrid = stages["pg-hybrid"]
    assert hybrid.kind == "observe" and hybrid.params["cutoff"] == 0.4
    lexical = [h.chunk_id for h in stages["pg-fulltext"].hits]
    semantic = [h.chunk_id for h in stages["pg-hnsw"].hits if h.score >= 0.4]
    expected: dict[str, float] = {}
    for ranked in (lexical, semantic):
        for rank, cid in enumerate(ranked, 1):
            expected[cid] = expected.get(cid, 0.0) + 1 / (60 + rank)
    assert {h.chunk_id: h.score for h in hybrid.hits} == pytest.approx(expected)


def test_a_pg_retriever_can_be_fused(demo_in_postgres):
    _, stored = demo_in_postgres
    question = "what does error E-4107 mean on the fleet server"
    for fuse in ({"method": "weighted"}, {"method": "rrf"}):
        config = stored.config.with_overrides(retrieve={"retrievers": ["pg-bm25", "lsa"], "observe": ["bm25"]},
                                              fuse=fuse)
        stages = {t.name: t for t in Pipeline(stored, config).run(question).trace}
        assert stages["fuse"].inputs == ("pg-bm25", "lsa")
        assert stages["fuse"].hits
    bm25 = {h.chunk_id for h in stages["bm25"].hits}
    assert bm25 == {h.chunk_id for h in stages["pg-bm25"].hits}
