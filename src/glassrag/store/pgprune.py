"""pg-bm25's top k from precomputed impacts, without summing every posting; exact.

A posting's impact w(t,d) is its BM25 term score at the index's k1 and b (store/pgwrite.py);
score(d) = Σ_t n(t) · w(t,d) over the question's distinct terms t, n(t) its count. Postings are
indexed by (term, impact descending), so a term's postings above a cutoff are one short index
range; impact_ranks holds each long term's impacts at ranks 1, 2, 4, … After the terms' look-up,
two statements, in the
manner of the threshold algorithm (Fagin et al. 2003) and MaxScore (Turtle & Flood 1995):

1. θ₀ (only when a term has more than READ_WHOLE postings; else θ₀ = 0 and step 2 reads every
   list whole): each term's DEPTH1 · k best postings give candidates; the k + k/2 of highest
   partial sum are scored exactly; θ₀ = the k-th best of those scores (0 with fewer). The k-th
   best score of the index is ≥ θ₀.
2. Cutoffs c(t) with Σ_t n(t) · c(t) ≤ BUDGET · θ₀ (< θ₀), chosen greedily where a unit of
   budget saves the most postings (by impact_ranks); a term with at most READ_WHOLE postings is
   read whole (c = 0). A chunk none of whose postings exceeds its term's cutoff scores
   ≤ Σ n(t) · c(t) < θ₀: it is not in the top k, so only postings with w > c(t) are read.
   A chunk read has lb = Σ of what was read and ub = lb + Σ n(t) · c(t) over the cut terms
   where it was not read; θ = max(θ₀, the k-th largest lb). Then, term by term (largest
   n(t) · c(t) first), chunks with ub < θ are dropped and the rest look the term's impact up
   in the primary key, turning its bound into the impact. What is left is scored exactly.

The exact score is summed in float32 in the embedded BM25's order (the term with the most
postings first, then the question's terms as they come, a repeated term once per
occurrence: lexical/bm25.py's score_all), so scores are bit-equal to the embedded store's and
ties break alike, by index order. The bounds are float64 with a relative margin MARGIN, so
float32 rounding never prunes a chunk that could tie.
"""

from __future__ import annotations

from typing import Any

from glassrag.store.pgschema import ORDER, Location

MARGIN = 1e-4  # relative slack on every bound (float32 sums differ from float64 by ~1e-7)
MAX_CUT_TERMS = 62  # which terms a chunk was read for is a bigint bitmask: a longer question reads all
# Chosen on the index of bench/postgres.py --chunks 250000 (SciFact ×48), 100 test queries, top 100:
# a grid of READ_WHOLE 2,000 / 5,000, BUDGET 0.5 / 0.75 / 1.0 and DEPTH1 2 / 5 gave p50 36-51 ms on a
# loaded machine; BUDGET 0.75 was best at both other settings, the rest within the noise.
READ_WHOLE = 2000  # a term with at most this many postings is read whole (no look-ups after)
DEPTH1 = 2  # statement 1 reads each term's DEPTH1 · k best postings
BUDGET = 0.75  # share of θ₀ spent on cutoffs: less reads more postings but leaves tighter bounds,
#               so fewer chunks to look up


def allocate(terms: list[tuple[int, int, list[float]]], budget: float) -> list[float]:
    """Cutoffs c(t) with Σ n(t) · c(t) ≤ budget for terms (n(t), df(t), impacts at ranks 1, 2,
    4, … and last): greedily the step with the most postings left unread per unit of budget.
    Reading the postings above the rank-r impact reads at most r − 1 of them."""
    cuts = [0.0] * len(terms)
    reads = [df for _, df, _ in terms]
    left = budget
    while True:
        best = None
        for i, (n, df, profile) in enumerate(terms):
            rank = 1
            for impact in profile:
                cost = n * (impact - cuts[i])
                saved = reads[i] - (rank - 1)
                if impact > cuts[i] and saved > 0 and cost <= left and (
                        best is None or saved / cost > best[0]):
                    best = (saved / cost, i, impact, rank - 1, cost)
                rank = min(rank * 2, df)
        if best is None:
            return cuts
        _, i, impact, read, cost = best
        cuts[i], reads[i], left = impact, read, left - cost


def top_k(conn: Any, loc: Location, tokens: list[str], k: int) -> list[tuple[str, float]]:
    """[(chunk id, BM25 score)] of the top k chunks, best first; ties by index order."""
    if not tokens or k <= 0:
        return []
    t = loc.table
    terms = conn.execute(f"""
        SELECT t.term, t.id, t.df, count(*)::int AS n, r.impacts FROM unnest(%(tokens)s::text[]) AS w(term)
        JOIN {t('terms')} t ON t.term = w.term LEFT JOIN {t('impact_ranks')} r ON r.term_id = t.id
        GROUP BY t.term, t.id, t.df, r.impacts""", {"tokens": tokens}).fetchall()
    if not terms:
        return []
    info = {term: (tid, df, n, profile) for term, tid, df, n, profile in terms}
    # the embedded BM25's order of addition: its longest column first, then token order
    occurrences = [info[w] for w in tokens if w in info]
    longest = max(range(len(occurrences)), key=lambda j: occurrences[j][1])
    order = [occurrences[longest][0]] + [o[0] for j, o in enumerate(occurrences) if j != longest]
    distinct = list(info.values())
    cut_terms = [i for i, (_, df, _, profile) in enumerate(distinct) if df > READ_WHOLE and profile] \
        if len(distinct) <= MAX_CUT_TERMS else []
    cuts = [0.0] * len(distinct)
    theta0 = _theta0(conn, loc, distinct, k) if cut_terms else 0.0  # no long list: every one is read
    for i, c in zip(cut_terms, allocate([(distinct[i][2], distinct[i][1], distinct[i][3]) for i in cut_terms],
                                        BUDGET * theta0 * (1 - MARGIN))):
        cuts[i] = c
    return conn.execute(_search_sql(loc, [i for i in cut_terms if cuts[i] > 0], distinct, cuts),
                        {"ids": [d[0] for d in distinct], "n": [d[2] for d in distinct], "cut": cuts,
                         "order": order, "theta0": theta0, "margin": MARGIN, "kth": k - 1, "k": k,
                         "cut_all": sum(d[2] * c for d, c in zip(distinct, cuts))}).fetchall()


def _theta0(conn: Any, loc: Location, distinct: list[tuple], k: int) -> float:
    """Statement 1: a lower bound on the k-th best score, from exact scores of the chunks
    with the best partial sums over each term's DEPTH1 · k best postings."""
    t = loc.table
    row = conn.execute(f"""
        WITH q AS (SELECT * FROM unnest(%(ids)s::int[], %(n)s::int[]) AS q(id, n)),
        top AS MATERIALIZED (
            SELECT p.chunk_key FROM q CROSS JOIN LATERAL (
                SELECT chunk_key, impact FROM {t('postings')} WHERE term_id = q.id
                ORDER BY impact DESC LIMIT %(r)s) p
            GROUP BY p.chunk_key ORDER BY sum(q.n * p.impact::float8) DESC LIMIT %(c)s),
        exact AS (
            SELECT top.chunk_key, sum(q.n * p.impact::float8) AS s FROM top CROSS JOIN q CROSS JOIN LATERAL (
                SELECT impact FROM {t('postings')} WHERE term_id = q.id AND chunk_key = top.chunk_key OFFSET 0) p
            GROUP BY top.chunk_key)
        SELECT s FROM exact ORDER BY s DESC OFFSET %(kth)s LIMIT 1""",
        {"ids": [d[0] for d in distinct], "n": [d[2] for d in distinct], "r": DEPTH1 * k, "c": k + k // 2,
         "kth": k - 1}).fetchone()
    return max(float(row[0]), 0.0) if row else 0.0


def _search_sql(loc: Location, probed: list[int], distinct: list[tuple], cuts: list[float]) -> str:
    """Statement 2: read above the cutoffs, then one look-up step per cut term in `probed`."""
    t = loc.table
    steps, previous = [], "got"
    for s, i in enumerate(sorted(probed, key=lambda i: -distinct[i][2] * cuts[i])):
        term, n, cut, bit = int(distinct[i][0]), int(distinct[i][2]), float(cuts[i]), 1 << i
        steps.append(f"""
        step{s} AS MATERIALIZED (
            SELECT g.chunk_key, g.seen,
                   g.lb + CASE WHEN g.seen & {bit} = 0 THEN coalesce({n} * (
                       SELECT impact::float8 FROM {t('postings')} WHERE term_id = {term} AND chunk_key = g.chunk_key
                   ), 0) ELSE 0 END AS lb,
                   g.rem - CASE WHEN g.seen & {bit} = 0 THEN {n} * {cut!r}::float8 ELSE 0 END AS rem
            FROM {previous} g, theta WHERE g.lb + g.rem >= theta.v * (1 - %(margin)s)),""")
        previous = f"step{s}"
    return f"""
        WITH q AS (SELECT q.*, (q.i - 1)::int AS bit FROM unnest(%(ids)s::int[], %(n)s::int[], %(cut)s::float8[])
                   WITH ORDINALITY AS q(id, n, cut, i)),
        o AS (SELECT * FROM unnest(%(order)s::int[]) WITH ORDINALITY AS o(id, ord)),
        got AS MATERIALIZED (
            SELECT p.chunk_key, sum(q.n * p.impact::float8) AS lb,
                   %(cut_all)s - sum(q.n * q.cut) AS rem, bit_or(1::bigint << q.bit) AS seen
            FROM q CROSS JOIN LATERAL (
                SELECT chunk_key, impact FROM {t('postings')} WHERE term_id = q.id AND impact > q.cut) p
            GROUP BY p.chunk_key),
        theta AS MATERIALIZED (
            SELECT greatest(%(theta0)s, coalesce((SELECT lb FROM got ORDER BY lb DESC OFFSET %(kth)s LIMIT 1), 0)) AS v),
        {"".join(steps)}
        kept AS (SELECT g.chunk_key FROM {previous} g, theta WHERE g.lb + g.rem >= theta.v * (1 - %(margin)s)),
        scored AS MATERIALIZED (
            SELECT k.chunk_key, sum(p.impact ORDER BY o.ord) AS score FROM kept k CROSS JOIN o CROSS JOIN LATERAL (
                SELECT impact FROM {t('postings')} WHERE term_id = o.id AND chunk_key = k.chunk_key OFFSET 0) p
            GROUP BY k.chunk_key),
        -- the k best and every chunk tied with the k-th: only those need their place in index order
        best AS (
            SELECT * FROM scored WHERE score >= coalesce(
                (SELECT score FROM scored ORDER BY score DESC OFFSET %(kth)s LIMIT 1), '-infinity'))
        SELECT c.id, s.score::float8 FROM best s JOIN {t('chunks')} c ON c.key = s.chunk_key
        ORDER BY s.score DESC, {ORDER} LIMIT %(k)s"""
