"""pg-bm25's stored impacts (issue 30, item 5): every write leaves every posting's impact that of
the index as written (N, df, avgdl, k1, b), so the pruned top k is exactly the embedded BM25's;
an index written before impacts is migrated, searched by the formula and told so, and gets
its impacts at the next write."""

from __future__ import annotations

from pathlib import Path

from glassrag.indexer import build_index
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve import make_retriever
from glassrag.store import open_store
from glassrag.store.pgprune import allocate
from glassrag.store.pgwrite import impact_profile
from tests.conftest import write_corpus
from tests.store.test_pg_search import assert_bm25_parity

QUESTIONS = ["what does E-4107 mean", "daily allowance Lisbon", "quiet hours", "travel expenses abroad",
             "who approves leave", "the fleet server error"]


def test_an_impact_profile_holds_the_impacts_at_ranks_1_2_4_and_the_last():
    assert impact_profile([1.0, 9.0, 3.0, 7.0, 5.0, 2.0]) == [9.0, 7.0, 3.0, 1.0]  # ranks 1, 2, 4, 6


def test_allocate_spends_the_budget_where_it_leaves_most_postings_unread():
    # one term, 8 postings, impacts 5, 4, 3, 1 at ranks 1, 2, 4, 8, budget 3.5: a cut at 3 costs 3
    # and leaves 8 − 3 = 5 unread (5/3 a unit), at 1 it leaves 1 (1/1); 4 and 5 cost too much
    assert allocate([(1, 8, [5.0, 4.0, 3.0, 1.0])], 3.5) == [3.0]
    # with budget 4 a cut at 4 leaves 7 unread (7/4 a unit) and beats the second term's best,
    # 2 · 2 = 4 for its 4 postings (4/4): the budget is spent
    assert allocate([(1, 8, [5.0, 4.0, 3.0, 1.0]), (2, 4, [2.0, 1.5, 1.0])], 4.0) == [4.0, 0.0]
    assert allocate([(1, 8, [5.0, 4.0, 3.0, 1.0])], 0.0) == [0.0]


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
    assert names == {"postings_pkey", "postings_chunk", "postings_impact"}


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
    # make it what format 1 wrote: no impact column nor impact_ranks, its primary key covering tf and len
    for statement in (f"ALTER TABLE {t('postings')} DROP COLUMN impact", f"DROP TABLE {t('impact_ranks')}",
                      f"ALTER TABLE {t('postings')} ADD CONSTRAINT postings_pkey PRIMARY KEY (term_id, chunk_key) "
                      "INCLUDE (tf, len)",
                      f"DELETE FROM {t('meta')} WHERE key = 'impacts'",
                      f"UPDATE {t('meta')} SET value = '1' WHERE key = 'format_version'"):
        store.conn.execute(statement)
    old = open_store(url).read()  # migrated to format 2: the column is there, empty
    assert store.conn.execute(f"SELECT count(*), count(impact) FROM {t('postings')}").fetchone()[0] > 0
    assert store.conn.execute(f"SELECT count(impact) FROM {t('postings')}").fetchone()[0] == 0
    pg = make_retriever("pg-bm25", old, old.config, BM25(old.counts))
    hits, notes = pg.apply(Query("quiet hours", old.analyzer("quiet hours")), [])
    assert hits and "written before impacts were stored" in notes[0] and "ingest" in notes[0]
    assert assert_bm25_parity(index, old, QUESTIONS) == len(QUESTIONS)  # the formula: right, slower
    open_store(url).write(old)  # nothing changed but the impacts, which are now stored
    assert store.conn.execute(f"SELECT count(*) - count(impact) FROM {t('postings')}").fetchone()[0] == 0
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


def test_pruning_on_every_term_keeps_the_ranking_exact(pg_url, monkeypatch):
    """The demo has no term with 2,000 postings, so pg-bm25 would read every list whole: with
    every term ranked and cut, the cutoffs and look-ups run, and the top k is still exact."""
    from glassrag.config import Config
    from glassrag.demo import demo_docs
    from glassrag.store import pgprune, pgwrite
    from tests.store.test_pg_search import demo_questions

    monkeypatch.setattr(pgwrite, "RANKED", 2)
    monkeypatch.setattr(pgprune, "READ_WHOLE", 1)
    built, _ = build_index([demo_docs()], Config())
    url = pg_url()
    open_store(url).write(built)
    cut = []
    real = pgprune.allocate

    def spy(terms, budget):
        cuts = real(terms, budget)
        cut.extend(c for c in cuts if c > 0)
        return cuts

    monkeypatch.setattr(pgprune, "allocate", spy)
    for depth in (10, 100):
        assert assert_bm25_parity(built, open_store(url).read(), demo_questions(), depth) >= 30
    assert len(cut) >= 30  # cutoffs were set, so postings were skipped and bounds looked up
