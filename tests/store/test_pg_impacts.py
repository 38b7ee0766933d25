"""pg-bm25's stored impacts (issue 30, item 5): every write leaves every posting's impact, and
every term's impact-ordered blocks, those of the index as written (N, df, avgdl, k1, b), so the
pruned top k is exactly the embedded BM25's; an index written before impacts (format 1) or
before blocks (format 2) is migrated, searched by the formula and told so, and gets its
impacts and blocks at the next write."""

from __future__ import annotations

from pathlib import Path

from glassrag.indexer import build_index
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve import make_retriever
from glassrag.store import open_store
import numpy as np
import pytest

from glassrag.store import pgschema
from glassrag.store.pgprune import block_of, plan
from glassrag.store.pgwrite import blocks
from tests.conftest import write_corpus
from tests.store.test_pg_search import assert_bm25_parity

QUESTIONS = ["what does E-4107 mean", "daily allowance Lisbon", "quiet hours", "travel expenses abroad",
             "who approves leave", "the fleet server error"]


def test_blocks_double_from_256_postings_up_to_4096_then_stay():
    starts = [0, 256, 512, 1024, 2048, 4096, 8192, 12288, 16384]
    assert block_of(np.array(starts)).tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8]
    assert block_of(np.array([s - 1 for s in starts[1:]])).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]


def test_a_terms_blocks_hold_its_postings_best_first_ties_by_chunk_key(monkeypatch):
    from glassrag.store import pgprune

    monkeypatch.setattr(pgprune, "FIRST", 2)
    monkeypatch.setattr(pgprune, "LARGEST", 2)  # blocks of 2 postings: ranks [0, 2), [2, 4), …
    terms = np.array([7, 3, 7, 7, 7, 7], dtype=np.int32)
    keys = np.array([10, 11, 12, 13, 14, 15], dtype=np.int64)
    impacts = np.array([1.0, 9.0, 3.0, 3.0, 0.5, 2.0], dtype=np.float32)
    rows = [(t, b, bound, np.frombuffer(k, ">i8").tolist(), np.frombuffer(w, ">f4").tolist())
            for t, b, bound, k, w in blocks(terms, keys, impacts)]
    assert rows == [(3, 0, 9.0, [11], [9.0]),
                    (7, 0, 3.0, [12, 13], [3.0, 3.0]), (7, 1, 2.0, [15, 10], [2.0, 1.0]), (7, 2, 0.5, [14], [0.5])]


def test_plan_reads_the_next_block_of_the_term_that_could_add_most_until_the_budget_holds():
    # term 0 (twice in the question): blocks bounded 5, 4, 1; term 1: 6, 3. Block 0 of each is
    # read: Σ n · u = 2 · 4 + 3 = 11. Budget 6: term 0's next block (2 · 4 = 8 > 3) is read,
    # leaving 2 · 1 + 3 = 5 ≤ 6
    bounds = [np.array([5.0, 4.0, 1.0]), np.array([6.0, 3.0])]
    assert plan(np.array([2.0, 1.0]), bounds, 6.0) == [2, 1]
    assert plan(np.array([2.0, 1.0]), bounds, 11.0) == [1, 1]  # ≤ budget already: block 0 alone
    assert plan(np.array([2.0, 1.0]), bounds, 4.9) == [2, 2]  # 2 · 1 + 3 = 5 > 4.9: term 1's next
    assert plan(np.array([2.0, 1.0]), bounds, 0.0) == [3, 2]  # a budget of 0 reads every block


def stored_impacts(store) -> dict | None:
    row = store.conn.execute(f"SELECT value FROM {store.loc.table('meta')} WHERE key = 'impacts'").fetchone()
    return row[0] if row else None


def test_an_incremental_write_recomputes_every_impact(index, tmp_path: Path, small_config, pg_url):
    url = pg_url()
    open_store(url).write(index)
    assert assert_bm25_parity(index, open_store(url).read(), QUESTIONS) == len(QUESTIONS)
    docs = write_corpus(tmp_path / "more", {"extra.md": "# Extra\n\nQuiet hours apply to the fleet server too.\n"})
    bigger, _ = build_index([docs], small_config, previous=open_store(url).read())
    assert len(bigger.chunks) > len(index.chunks)
    open_store(url).write(bigger)  # N, df and avgdl change: so does every impact, old chunks' too
    assert assert_bm25_parity(bigger, open_store(url).read(), QUESTIONS) == len(QUESTIONS)
    store = open_store(url)
    names = {r[0] for r in store.conn.execute(
        "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'postings'", (store.loc.schema,))}
    assert names == {"postings_pkey", "postings_chunk"}


def test_a_new_k1_and_b_at_ingest_recompute_the_impacts(index, pg_url):
    url = pg_url()
    open_store(url).write(index)
    k1, b = index.config.bm25.k1, index.config.bm25.b
    assert stored_impacts(open_store(url)) == {"k1": k1, "b": b}
    tuned = index.config.with_overrides(bm25={"k1": k1 + 0.7, "b": 0.75 if b != 0.75 else 0.3})
    again = type(index)(tuned, index.documents, index.chunks, index.counts, index.lsa)
    open_store(url).write(again)  # the same documents: only the impacts change
    read = open_store(url).read()
    assert stored_impacts(open_store(url)) == {"k1": tuned.bm25.k1, "b": tuned.bm25.b}
    assert read.config.bm25.k1 == tuned.bm25.k1
    assert assert_bm25_parity(again, read, QUESTIONS) == len(QUESTIONS)


def test_an_index_written_before_impacts_is_searched_by_the_formula_until_written(index, pg_url):
    url = pg_url()
    store = open_store(url)
    store.write(index)
    t = store.loc.table
    # make it what format 1 wrote: no impact column nor blocks, its primary key covering tf and len
    for statement in (f"ALTER TABLE {t('postings')} DROP COLUMN impact", f"DROP TABLE {t('blocks')}",
                      f"ALTER TABLE {t('postings')} ADD CONSTRAINT postings_pkey PRIMARY KEY (term_id, chunk_key) "
                      "INCLUDE (tf, len)",
                      f"DELETE FROM {t('meta')} WHERE key = 'impacts'",
                      f"UPDATE {t('meta')} SET value = '1' WHERE key = 'format_version'"):
        store.conn.execute(statement)
    old = open_store(url).read()  # migrated to format 3: the column is there, empty, and so are blocks
    assert store.conn.execute(f"SELECT count(*), count(impact) FROM {t('postings')}").fetchone()[0] > 0
    assert store.conn.execute(f"SELECT count(impact) FROM {t('postings')}").fetchone()[0] == 0
    assert store.conn.execute(f"SELECT count(*) FROM {t('blocks')}").fetchone()[0] == 0
    pg = make_retriever("pg-bm25", old, old.config, BM25(old.counts))
    hits, notes = pg.apply(Query("quiet hours", old.analyzer("quiet hours")), [])
    assert hits and "written before impacts were stored" in notes[0] and "ingest" in notes[0]
    assert assert_bm25_parity(index, old, QUESTIONS) == len(QUESTIONS)  # the formula: right, slower
    open_store(url).write(old)  # nothing changed but the impacts, which are now stored
    assert store.conn.execute(f"SELECT count(*) - count(impact) FROM {t('postings')}").fetchone()[0] == 0
    assert store.conn.execute(f"SELECT count(*) FROM {t('blocks')}").fetchone()[0] > 0
    assert assert_bm25_parity(index, open_store(url).read(), QUESTIONS) == len(QUESTIONS)


def test_an_index_written_before_blocks_is_searched_by_the_formula_until_written(index, pg_url):
    url = pg_url()
    store = open_store(url)
    store.write(index)
    t = store.loc.table
    # make it what format 2 wrote: impact_ranks and an index by impact instead of blocks
    for statement in (f"DROP TABLE {t('blocks')}",
                      f"CREATE TABLE {t('impact_ranks')} (term_id int PRIMARY KEY, impacts real[] NOT NULL)",
                      f"CREATE INDEX postings_impact ON {t('postings')} (term_id, impact DESC) INCLUDE (chunk_key)",
                      f"UPDATE {t('meta')} SET value = '2' WHERE key = 'format_version'"):
        store.conn.execute(statement)
    old = open_store(url).read()  # migrated to format 3: blocks are there, empty
    assert pgschema.stored_format(store.conn, store.loc) == pgschema.PG_FORMAT == 3
    assert store.conn.execute(f"SELECT to_regclass('{store.loc.schema}.impact_ranks'), "
                              f"to_regclass('{store.loc.schema}.postings_impact')").fetchone() == (None, None)
    pg = make_retriever("pg-bm25", old, old.config, BM25(old.counts))
    hits, notes = pg.apply(Query("quiet hours", old.analyzer("quiet hours")), [])
    assert hits and "by the formula" in notes[0] and "ingest" in notes[0]
    assert assert_bm25_parity(index, old, QUESTIONS) == len(QUESTIONS)
    open_store(url).write(old)  # nothing changed, but the blocks are written
    assert store.conn.execute(f"SELECT count(*) FROM {t('blocks')}").fetchone()[0] > 0
    assert assert_bm25_parity(index, open_store(url).read(), QUESTIONS) == len(QUESTIONS)


def test_removing_a_document_recomputes_the_impacts(index, corpus: Path, small_config, pg_url):
    url = pg_url()
    open_store(url).write(index)
    first = sorted(corpus.iterdir())[0]
    first.unlink()
    smaller, _ = build_index([corpus], small_config, previous=open_store(url).read(), prune=True)
    assert len(smaller.documents) == len(index.documents) - 1
    open_store(url).write(smaller)
    assert assert_bm25_parity(smaller, open_store(url).read(), QUESTIONS) == len(QUESTIONS)


@pytest.mark.parametrize("budget", [0.5, 0.9])
def test_pruning_on_every_term_keeps_the_ranking_exact(pg_url, monkeypatch, budget: float):
    """The demo's lists are shorter than a block of 256, so pg-bm25 would read each whole at
    once: with blocks of 4 postings, blocks are left unread and impacts looked up, and the top
    k is still exact, at a small and a large budget."""
    from glassrag.config import Config
    from glassrag.demo import demo_docs
    from glassrag.store import pgprune
    from tests.store.test_pg_search import demo_questions

    monkeypatch.setattr(pgprune, "FIRST", 4)
    monkeypatch.setattr(pgprune, "LARGEST", 4)
    monkeypatch.setattr(pgprune, "BUDGET", budget)
    built, _ = build_index([demo_docs()], Config())
    url = pg_url()
    open_store(url).write(built)
    skipped, looked_up = [], []
    real_plan, real_impacts = pgprune.plan, pgprune._impacts_of

    def plan(n, bounds, limit):
        read = real_plan(n, bounds, limit)
        skipped.append(sum(len(b) - r for b, r in zip(bounds, read)))
        return read

    def impacts_of(conn, loc, candidates, ids, key_lists, impact_lists, u):
        looked_up.append(sum(int((~np.isin(candidates, keys)).sum()) for keys, cut in zip(key_lists, u) if cut > 0))
        return real_impacts(conn, loc, candidates, ids, key_lists, impact_lists, u)

    monkeypatch.setattr(pgprune, "plan", plan)
    monkeypatch.setattr(pgprune, "_impacts_of", impacts_of)
    for depth in (10, 100):
        assert assert_bm25_parity(built, open_store(url).read(), demo_questions(), depth) >= 30
    assert sum(1 for s in skipped if s) >= 30  # blocks were left unread …
    assert sum(1 for n in looked_up if n) >= 10  # … and impacts looked up
