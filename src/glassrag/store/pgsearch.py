"""The SQL of the pg-* retrievers: each returns [(chunk id, score)], best first.

BM25 (Lucene's variant, the formula of glassrag/lexical/bm25.py), summed over the question's
distinct terms t with their counts n(t):

    score(d) = Σ_t n(t) · w(t,d),  w(t,d) = ln((N − df(t) + 0.5) / (df(t) + 0.5) + 1)
                                         · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))

`bm25` reads w(t,d), the posting's impact, stored at the index's k1 and b (store/pgwrite.py),
and finds the top k without reading every posting (store/pgprune.py: PostgreSQL selects
impact-ordered blocks of postings and looks impacts up, numpy sums them; exact, and equal to the
embedded BM25's ranking, float32 sums in its order); `bm25_formula` computes w from tf and |d|
in SQL for any k1 and b, summing every posting of every query term (the path for a k1 or b
other than the index's, or an index written before impacts and blocks).

Dense: cosine similarity 1 − (e <=> q) (pgvector's cosine distance), exactly (a sequential
scan: ordering by an expression the HNSW index cannot serve) or through the HNSW index with
`hnsw.ef_search`. Full text: `ts_rank_cd` (cover density) of `chunks.tsv` for
`websearch_to_tsquery` (every word must match) or for the same words ORed. The hybrid is the
one-statement recipe: full text and pgvector (cosine ≥ cutoff) each ranked, fused by
reciprocal rank Σ 1 / (k + rank) (Cormack et al. 2009) in a CTE.
Ties are broken by index order (document id in byte order, then position), as the embedded
store breaks them by row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glassrag.store.pgprune import top_k
from glassrag.store.pgschema import ORDER, TEXT_SEARCH, Location


def bm25(conn: Any, loc: Location, tokens: list[str], depth: int) -> list[tuple[str, float]]:
    """Top `depth` chunks by BM25 from the stored impact-ordered blocks (pruned, exact)."""
    return top_k(conn, loc, tokens, depth)


def bm25_formula(conn: Any, loc: Location, tokens: list[str], k1: float, b: float,
                 depth: int) -> list[tuple[str, float]]:
    """Top `depth` chunks by BM25 at any k1 and b: every posting of every term, the formula per posting."""
    t = loc.table
    return conn.execute(f"""
        WITH q AS (
            SELECT t.id, t.df, count(*) AS n FROM unnest(%(tokens)s::text[]) AS w(term)
            JOIN {t('terms')} t ON t.term = w.term GROUP BY t.id, t.df),
        st AS (SELECT n_chunks::float8 AS n, total_length / greatest(n_chunks, 1) AS avgdl FROM {t('stats')}),
        scored AS (
            SELECT p.chunk_key, sum(q.n * ln((st.n - q.df + 0.5) / (q.df + 0.5) + 1)
                   * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.len / st.avgdl))) AS score
            FROM q CROSS JOIN st CROSS JOIN LATERAL (
                -- one term's postings, read from the covering primary key (an index-only scan)
                SELECT chunk_key, tf, len FROM {t('postings')} WHERE term_id = q.id) p
            GROUP BY p.chunk_key ORDER BY score DESC LIMIT %(pool)s)
        SELECT c.id, s.score FROM scored s JOIN {t('chunks')} c ON c.key = s.chunk_key
        ORDER BY s.score DESC, {ORDER} LIMIT %(depth)s""",
        {"tokens": tokens, "k1": float(k1), "b": float(b), "depth": depth, "pool": depth + 50}).fetchall()


def vector_literal(vector: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def dense(conn: Any, loc: Location, table: str, kind: str, vector: np.ndarray, depth: int,
          exact: bool, ef_search: int = 40) -> list[tuple[str, float]]:
    """Top `depth` chunks by cosine (exact: every vector; else the HNSW index)."""
    t = loc.table
    q = vector_literal(vector)
    if exact:
        return conn.execute(f"""
            SELECT c.id, 1 - (v.embedding <=> %(q)s::{kind}) AS sim FROM {t(table)} v
            JOIN {t('chunks')} c ON c.key = v.chunk_key
            ORDER BY 1 - (v.embedding <=> %(q)s::{kind}) DESC, {ORDER} LIMIT %(depth)s""",
            {"q": q, "depth": depth}).fetchall()
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        return conn.execute(f"""
            SELECT c.id, 1 - n.dist AS sim FROM (
                SELECT chunk_key, embedding <=> %(q)s::{kind} AS dist FROM {t(table)}
                ORDER BY embedding <=> %(q)s::{kind} LIMIT %(depth)s) n
            JOIN {t('chunks')} c ON c.key = n.chunk_key ORDER BY n.dist, {ORDER}""",
            {"q": q, "depth": depth}).fetchall()


def tsquery(words: str) -> str:
    """The SQL of the question's tsquery: `websearch_to_tsquery` (all words), or `or` (any word)."""
    if words == "or":
        return f"replace(plainto_tsquery('{TEXT_SEARCH}', %(question)s)::text, ' & ', ' | ')::tsquery"
    return f"websearch_to_tsquery('{TEXT_SEARCH}', %(question)s)"


def fulltext(conn: Any, loc: Location, question: str, depth: int, words: str = "all") -> tuple[str, list[tuple[str, float]]]:
    """(the tsquery as text, top `depth` chunks by ts_rank_cd among those it matches)."""
    t = loc.table
    query = conn.execute(f"SELECT ({tsquery(words)})::text", {"question": question}).fetchone()[0]
    if not query:
        return "", []
    rows = conn.execute(f"""
        WITH q AS (SELECT {tsquery(words)} AS tsq)
        SELECT c.id, ts_rank_cd(c.tsv, q.tsq) AS score FROM {t('chunks')} c, q WHERE c.tsv @@ q.tsq
        ORDER BY score DESC, {ORDER} LIMIT %(depth)s""", {"question": question, "depth": depth}).fetchall()
    return query, rows


def hybrid(conn: Any, loc: Location, table: str, kind: str, question: str, vector: np.ndarray,
           depth: int, cutoff: float, k: int = 60, ef_search: int = 40,
           words: str = "all") -> tuple[list[tuple[str, float]], dict[str, int]]:
    """The one-CTE SQL hybrid; also how many chunks each side contributed."""
    t = loc.table
    params = {"question": question, "q": vector_literal(vector), "depth": depth, "cutoff": float(cutoff),
              "k": int(k)}
    with conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {int(ef_search)}")
        rows = conn.execute(f"""
            WITH q AS (SELECT {tsquery(words)} AS tsq, %(q)s::{kind} AS v),
            lexical AS (
                SELECT c.key, row_number() OVER (ORDER BY ts_rank_cd(c.tsv, q.tsq) DESC, c.key) AS rank
                FROM {t('chunks')} c, q WHERE c.tsv @@ q.tsq ORDER BY rank LIMIT %(depth)s),
            nearest AS (
                SELECT v.chunk_key AS key, v.embedding <=> q.v AS dist FROM {t(table)} v, q
                ORDER BY v.embedding <=> q.v LIMIT %(depth)s),
            semantic AS (
                SELECT key, row_number() OVER (ORDER BY dist, key) AS rank FROM nearest
                WHERE 1 - dist >= %(cutoff)s),
            fused AS (
                SELECT key, sum(1.0 / (%(k)s + rank)) AS score, bool_or(side = 'l') AS lex,
                       bool_or(side = 's') AS sem
                FROM (SELECT key, rank, 'l' AS side FROM lexical
                      UNION ALL SELECT key, rank, 's' FROM semantic) both_sides GROUP BY key)
            SELECT c.id, f.score::float8, f.lex, f.sem FROM fused f JOIN {t('chunks')} c ON c.key = f.key
            ORDER BY f.score DESC, {ORDER} LIMIT %(depth)s""", params).fetchall()
    sides = {"full text": sum(1 for r in rows if r[2]), "pgvector": sum(1 for r in rows if r[3])}
    return [(r[0], r[1]) for r in rows], sides
