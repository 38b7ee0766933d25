"""pg-bm25's top k from precomputed impacts, without summing every posting; exact.

A posting's impact w(t,d) is its BM25 term score at the index's k1 and b (store/pgwrite.py);
score(d) = Σ_t n(t) · w(t,d) over the question's distinct terms t, n(t) its count. Postings are
indexed by (term, impact descending), so a term's postings above a cutoff, and its largest
impact max(t), are a short index range. Two statements (a threshold algorithm in the manner
of Fagin et al. 2003 and MaxScore's term bounds, Turtle & Flood 1995):

1. θ₀ = the k-th largest partial sum over the union of each term's k best postings. k
   chunks score at least their partial sums, so the k-th best score is ≥ θ₀.
2. Cutoffs c(t) with Σ_t n(t) · c(t) < θ₀ (water-filling: n(t) · c(t) = min(n(t) · max(t), α),
   the largest α that fits). A chunk none of whose postings exceeds its term's cutoff scores
   ≤ Σ n(t) · c(t) < θ₀, so it is not in the top k: only postings with w > c(t) are read.
   Each chunk read has lb(d) = Σ of what was read, ub(d) = lb(d) + Σ of n(t) · c(t) over the
   terms where nothing was read for it; θ₁ = the k-th largest lb; chunks with ub < θ₁ cannot
   reach the top k. The rest are scored exactly, looking up each question term's impact
   for the chunk in the primary key.

The exact score is summed in float32 in the embedded BM25's order (the term with the most
postings first, then the question's terms as they come, a repeated term once per
occurrence: lexical/bm25.py's score_all), so scores are bit-equal to the embedded store's and
ties break alike, by index order. The bounds are float64 with a relative margin MARGIN, so
float32 rounding never prunes a chunk that could tie.
"""

from __future__ import annotations

from typing import Any

from glassrag.store.pgschema import Location

MARGIN = 1e-4  # relative slack on every bound (float32 sums differ from float64 by ~1e-7)
ORDER = 'c.doc_id COLLATE "C", c.position'


def water_fill(bounds: list[float], budget: float) -> float:
    """The largest α with Σ min(u, α) ≤ budget over `bounds` u ≥ 0 (0 when budget ≤ 0;
    infinite when every bound fits)."""
    if budget <= 0:
        return 0.0
    rest, left = sorted(bounds), budget
    for i, u in enumerate(rest):
        alpha = left / (len(rest) - i)
        if alpha <= u:
            return alpha
        left -= u
    return float("inf")


def top_k(conn: Any, loc: Location, tokens: list[str], k: int) -> list[tuple[str, float]]:
    """[(chunk id, BM25 score)] of the top k chunks, best first; ties by index order."""
    if not tokens or k <= 0:
        return []
    t = loc.table
    terms = conn.execute(f"""
        WITH q AS MATERIALIZED (
            SELECT t.term, t.id, t.df, count(*)::int AS n FROM unnest(%(tokens)s::text[]) AS w(term)
            JOIN {t('terms')} t ON t.term = w.term GROUP BY t.term, t.id, t.df),
        top AS MATERIALIZED (
            SELECT p.chunk_key FROM q CROSS JOIN LATERAL (
                SELECT chunk_key, impact FROM {t('postings')} WHERE term_id = q.id
                ORDER BY impact DESC LIMIT %(k)s) p
            GROUP BY p.chunk_key ORDER BY sum(q.n * p.impact::float8) DESC LIMIT %(k)s),
        exact AS (
            SELECT sum(q.n * p.impact::float8) AS s FROM top CROSS JOIN q
            JOIN {t('postings')} p ON p.term_id = q.id AND p.chunk_key = top.chunk_key GROUP BY top.chunk_key),
        theta AS (SELECT CASE WHEN count(*) = %(k)s THEN min(s) ELSE 0 END AS v FROM exact)
        SELECT q.term, q.id, q.df, q.n,
               (SELECT impact FROM {t('postings')} WHERE term_id = q.id ORDER BY impact DESC LIMIT 1)::float8,
               theta.v
        FROM q, theta""", {"tokens": tokens, "k": k}).fetchall()
    if not terms:
        return []
    info = {term: (tid, df, n, top or 0.0) for term, tid, df, n, top, _ in terms}
    theta0 = max(float(terms[0][5] or 0.0), 0.0)
    # the embedded BM25's order of addition: its longest column first, then token order
    occurrences = [info[w] for w in tokens if w in info]
    longest = max(range(len(occurrences)), key=lambda j: occurrences[j][1])
    order = [occurrences[longest][0]] + [o[0] for j, o in enumerate(occurrences) if j != longest]
    distinct = list(info.values())
    alpha = water_fill([n * top for _, _, n, top in distinct], theta0 * (1 - MARGIN))
    cuts = [min(top, alpha / n) for _, _, n, top in distinct]
    return conn.execute(f"""
        WITH q AS (SELECT * FROM unnest(%(ids)s::int[], %(n)s::int[], %(cut)s::float8[]) AS q(id, n, cut)),
        o AS (SELECT * FROM unnest(%(order)s::int[]) WITH ORDINALITY AS o(id, ord)),
        got AS MATERIALIZED (
            SELECT p.chunk_key, sum(q.n * p.impact::float8) AS lb, sum(q.n * q.cut) AS cut_seen
            FROM q CROSS JOIN LATERAL (
                SELECT chunk_key, impact FROM {t('postings')} WHERE term_id = q.id AND impact > q.cut) p
            GROUP BY p.chunk_key),
        theta AS (SELECT coalesce((SELECT lb FROM got ORDER BY lb DESC OFFSET %(kth)s LIMIT 1), 0) AS v),
        kept AS (
            SELECT g.chunk_key FROM got g, theta
            WHERE g.lb + (%(cut_all)s - g.cut_seen) >= theta.v * (1 - %(margin)s)),
        scored AS (
            SELECT k.chunk_key, sum(p.impact ORDER BY o.ord) AS score FROM kept k CROSS JOIN o
            JOIN {t('postings')} p ON p.term_id = o.id AND p.chunk_key = k.chunk_key GROUP BY k.chunk_key)
        SELECT c.id, s.score::float8 FROM scored s JOIN {t('chunks')} c ON c.key = s.chunk_key
        ORDER BY s.score DESC, {ORDER} LIMIT %(k)s""",
        {"ids": [d[0] for d in distinct], "n": [d[2] for d in distinct], "cut": cuts, "order": order,
         "cut_all": sum(d[2] * c for d, c in zip(distinct, cuts)), "margin": MARGIN, "kth": k - 1,
         "k": k}).fetchall()
