"""pg-bm25's top k from precomputed impacts, without reading every posting; exact.

A posting's impact w(t,d) is its BM25 term score at the index's k1 and b (store/pgwrite.py);
score(d) = Σ_t n(t) · w(t,d) over the question's distinct terms t, n(t) its count. Each term's
postings are stored best first, in blocks (the `blocks` table: ranks [0, 256), [256, 512),
[512, 1024), … doubling up to 4,096 postings a block; each row the block's largest impact, its
bound, and its chunk keys and impacts as two arrays). PostgreSQL selects the blocks; numpy sums
them. In the manner of the threshold algorithm (Fagin et al. 2003) and MaxScore (Turtle &
Flood 1995), in at most three statements:

1. The question's terms with every block's bound and the block 0 of each. lb(d) = Σ n(t) ·
   w(t,d) over what is read; θ₀ = the k-th largest lb (0 with fewer), a lower bound on the
   k-th best score.
2. u(t) = the bound of t's first unread block (0 once t is read whole). The next block of the
   term with the largest n(t) · u(t) is planned until Σ_t n(t) · u(t) ≤ BUDGET · θ₀ (< θ₀), and
   the planned blocks are read in one statement. A chunk read in no block scores at most
   Σ n(t) · u(t) < θ₀: it is not in the top k.
3. A chunk read has ub(d) = lb(d) + Σ n(t) · u(t) over the terms t not read whole where it was
   not read; θ = max(θ₀, the k-th largest lb). The chunks with ub ≥ θ are the candidates. One
   statement looks up their impacts for the terms where they were not read (in the postings'
   primary key) and reads their ids and places in index order from `chunks`.
Then the candidates' exact scores are summed in float32 in the embedded BM25's order (the
term with the most postings first, then the question's terms as they come, a repeated term
once per occurrence: lexical/bm25.py's score_all), so scores are bit-equal to the embedded
store's, and the k best are ordered by score, then index order, as the embedded store's are.

The bounds are float64 with a relative margin MARGIN, so float32 rounding never drops a chunk
that could tie. A posting read costs ~12 bytes sent and a numpy add, a look-up an index probe:
the budget is small, and the postings skipped are mostly the tails of the longest lists.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from glassrag.store.pgcheck import block
from glassrag.store.pgschema import ORDER, Location

MARGIN = 1e-4  # relative slack on every bound (float32 sums differ from float64 by ~1e-7)
FIRST = 256  # postings in block 0 (and in block 1); blocks then double up to LARGEST
LARGEST = 4096
# Chosen on the indexes of bench/postgres.py --chunks 50000 and 250000 (SciFact ×10, ×48), 200 test
# queries, top 100, budgets timed interleaved in one process on a loaded machine (p50 ms; the
# median question's share of its postings read): at 250,000, BUDGET 0 / 0.1 / 0.2 / 0.3 / 0.5 gave
# 11.0 (100 %) / 8.4 (90 %) / 8.5 (69 %) / 9.9 (60 %) / 11.2 (43 %); at 50,000, 4.2 / 3.7 / 3.7 /
# 4.2 / 5.9. A larger budget reads fewer postings but leaves more candidates to look up.
BUDGET = 0.2


def block_of(rank: np.ndarray) -> np.ndarray:
    """The block of each rank (0-based, best first): [0, 256) → 0, [256, 512) → 1, [512,
    1024) → 2, … doubling while a block holds at most LARGEST postings, then LARGEST each."""
    rank = np.asarray(rank, dtype=np.int64)
    doubling = np.frexp(np.maximum(rank // FIRST, 1).astype(np.float64))[1].astype(np.int64)
    steady = int(np.frexp(float(2 * LARGEST // FIRST))[1])  # the block that starts at 2 · LARGEST
    out = np.where(rank < FIRST, 0, doubling)
    return np.where(rank >= 2 * LARGEST, steady + (rank - 2 * LARGEST) // LARGEST, out)


def plan(n: np.ndarray, bounds: list[np.ndarray], budget: float) -> list[int]:
    """How many blocks of each term to read (block 0 of each is read): the next block of the
    term with the largest n(t) · u(t) while Σ n(t) · u(t) > budget (u: the bound of the first
    unread block, 0 once read whole)."""
    read = [1] * len(n)
    u = np.array([b[1] if len(b) > 1 else 0.0 for b in bounds], dtype=np.float64)
    while float(n @ u) > budget:
        i = int(np.argmax(n * u))
        read[i] += 1
        u[i] = bounds[i][read[i]] if read[i] < len(bounds[i]) else 0.0
    return read


def int_array(values: np.ndarray) -> str:
    """A PostgreSQL array literal (a long list is parsed by the server, not dumped per element)."""
    return "{" + ",".join(map(str, np.asarray(values).tolist())) + "}"


def kth_largest(values: np.ndarray, k: int) -> float:
    """The k-th largest positive value, or 0 with fewer than k."""
    positive = values[values > 0]
    if positive.size < k:
        return 0.0
    return float(np.partition(positive, positive.size - k)[positive.size - k])


def top_k(conn: Any, loc: Location, tokens: list[str], k: int) -> list[tuple[str, float]]:
    """[(chunk id, BM25 score)] of the top k chunks, best first; ties by index order."""
    return counted_top_k(conn, loc, tokens, k)[0]


def counted_top_k(conn: Any, loc: Location, tokens: list[str],
                  k: int) -> tuple[list[tuple[str, float]], dict[str, int]]:
    """top_k, and what it took: the question's terms' postings, how many were read (in the
    blocks read), how many impacts were looked up, how many candidates were scored exactly."""
    counts = {"postings": 0, "read": 0, "looked_up": 0, "candidates": 0}
    if not tokens or k <= 0:
        return [], counts
    t = loc.table
    rows = conn.execute(f"""
        SELECT t.term, t.id, t.df, b.keys, b.impacts,
               ARRAY(SELECT x.bound FROM {t('blocks')} x WHERE x.term_id = t.id ORDER BY x.block)
        FROM {t('terms')} t JOIN {t('blocks')} b ON b.term_id = t.id AND b.block = 0
        WHERE t.term = ANY(%s::text[])""", (sorted(set(tokens)),), binary=True).fetchall()
    if not rows:
        return [], counts
    column = {r[0]: i for i, r in enumerate(rows)}
    ids = [int(r[1]) for r in rows]
    n = np.bincount([column[w] for w in tokens if w in column], minlength=len(rows)).astype(np.float64)
    bounds = [np.asarray(r[5], dtype=np.float64) for r in rows]
    firsts = [block(loc, r[3], r[4]) for r in rows]
    keys = [[f[0]] for f in firsts]
    impacts = [[f[1]] for f in firsts]

    # the first blocks are short: summed by chunk over their distinct keys, not a dense array
    _, chunk = np.unique(np.concatenate([k_[0] for k_ in keys]), return_inverse=True)
    theta0 = kth_largest(np.bincount(chunk, np.concatenate([n[i] * w[0].astype(np.float64)
                                                            for i, w in enumerate(impacts)])), k)
    read = plan(n, bounds, BUDGET * theta0 * (1 - MARGIN))
    if max(read) > 1:
        of_id = {term: i for i, term in enumerate(ids)}
        with conn.cursor(binary=True) as cur:
            cur.execute(f"""
                SELECT b.term_id, b.keys, b.impacts FROM {t('blocks')} b
                JOIN unnest(%s::int[], %s::int[]) AS r(id, last) ON b.term_id = r.id AND b.block BETWEEN 1 AND r.last
                ORDER BY b.term_id, b.block""", ([ids[i] for i, r in enumerate(read) if r > 1],
                                                 [r - 1 for r in read if r > 1]))
            # the raw values, not psycopg's rows: test query 3's 1.3 MB of blocks at 250,000
            # chunks took 1.4 ms so, 2.6 ms through fetchall
            result = cur.pgresult
            for row in range(result.ntuples if result is not None else 0):
                i = of_id[int.from_bytes(result.get_value(row, 0), "big", signed=True)]
                more_keys, more_impacts = block(loc, result.get_value(row, 1), result.get_value(row, 2))
                keys[i].append(more_keys)
                impacts[i].append(more_impacts)
    key_lists = [np.concatenate(k_).astype(np.int64) for k_ in keys]
    impact_lists = [np.concatenate(w) for w in impacts]
    u = np.array([b[r] if r < len(b) else 0.0 for b, r in zip(bounds, read)], dtype=np.float64)
    candidates = _candidates(n, u, key_lists, impact_lists, theta0, k)
    table, chunks, looked_up = _impacts_of(conn, loc, candidates, ids, key_lists, impact_lists, u)
    counts.update(postings=sum(int(r[2]) for r in rows), read=sum(keys.size for keys in key_lists),
                  looked_up=looked_up, candidates=int(candidates.size))
    return _ranked(tokens, rows, column, candidates, table, chunks, k), counts


def _candidates(n: np.ndarray, u: np.ndarray, key_lists: list[np.ndarray], impact_lists: list[np.ndarray],
                theta0: float, k: int) -> np.ndarray:
    """The chunk keys whose upper bound reaches θ: lb(d) = Σ n(t) · w(t,d) over what was read,
    ub(d) = lb(d) + Σ n(t) · u(t) over the terms not read whole where d was not read, θ =
    max(θ₀, the k-th largest lb) (dense arrays indexed by chunk key, float64)."""
    size = max(int(keys.max()) + 1 for keys in key_lists)
    lb = np.bincount(np.concatenate(key_lists),
                     np.concatenate([n[i] * w.astype(np.float64) for i, w in enumerate(impact_lists)]), minlength=size)
    # ub ≤ lb + Σ n(t) · u(t) = lb + unread; a chunk with ub < θ₀ cannot reach θ ≥ θ₀, nor raise
    # the k-th largest lb above θ₀. Only lb is a dense array: a fresh one costs more in page
    # faults than in arithmetic, so the bounds are taken on the chunks that may reach θ₀.
    unread = float(n @ u)
    floor = theta0 * (1 - MARGIN) - unread
    pool = np.flatnonzero(lb >= floor) if floor > 0 else np.flatnonzero(lb > 0)
    ub = lb[pool] + unread
    for i in np.flatnonzero(u > 0).tolist():
        seen = np.zeros(size, dtype=bool)
        seen[key_lists[i]] = True
        ub -= (n[i] * u[i]) * seen[pool]
    keep = ub >= theta0 * (1 - MARGIN)
    pool, ub = pool[keep], ub[keep]
    theta = max(theta0, kth_largest(lb[pool], k))
    return pool[ub >= theta * (1 - MARGIN)]


def _impacts_of(conn: Any, loc: Location, candidates: np.ndarray, ids: list[int], key_lists: list[np.ndarray],
                impact_lists: list[np.ndarray], u: np.ndarray) -> tuple[np.ndarray, dict[int, tuple[str, int]], int]:
    """The candidates' impacts (candidates × terms, float32): those read, then those of the
    terms not read whole where a candidate was not read, looked up; and each candidate's id
    and place in index order (chunk key -> (id, place)), in the same statement; and how many
    impacts were looked up."""
    table = np.zeros((candidates.size, len(ids)), dtype=np.float32)
    at = np.full(max(int(keys.max()) + 1 for keys in key_lists), -1, dtype=np.int32)
    at[candidates] = np.arange(candidates.size)
    missing_terms, missing_keys = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
    for i, (keys, impacts) in enumerate(zip(key_lists, impact_lists)):
        row = at[keys]
        found = row >= 0
        table[row[found], i] = impacts[found]
        if u[i] > 0:
            seen = np.zeros(candidates.size, dtype=bool)
            seen[row[found]] = True
            missing_terms.append(np.full(candidates.size - int(seen.sum()), ids[i]))
            missing_keys.append(candidates[~seen])
    t = loc.table
    column = {term: i for i, term in enumerate(ids)}
    chunks = {}
    for term, key, impact, chunk_id, place in conn.execute(f"""
            SELECT m.id, m.key, p.impact, NULL, NULL FROM unnest(%s::int[], %s::bigint[]) AS m(id, key)
            JOIN {t('postings')} p ON p.term_id = m.id AND p.chunk_key = m.key
            UNION ALL
            SELECT NULL, c.key, NULL, c.id, row_number() OVER (ORDER BY {ORDER}) FROM {t('chunks')} c
            WHERE c.key = ANY(%s::bigint[])""",
            (int_array(np.concatenate(missing_terms)), int_array(np.concatenate(missing_keys)),
             int_array(candidates))).fetchall():
        if chunk_id is None:
            table[at[key], column[term]] = impact
        else:
            chunks[key] = (chunk_id, place)
    return table, chunks, sum(m.size for m in missing_keys)


def _ranked(tokens: list[str], rows: list[tuple], column: dict[str, int], candidates: np.ndarray,
            table: np.ndarray, chunks: dict[int, tuple[str, int]], k: int) -> list[tuple[str, float]]:
    """The candidates' exact float32 scores in the embedded BM25's order of addition; the k
    best, ordered by score, then index order."""
    occurrences = [column[w] for w in tokens if w in column]
    longest = max(range(len(occurrences)), key=lambda j: rows[occurrences[j]][2])
    scores = np.zeros(candidates.size, dtype=np.float32)
    for i in [occurrences[longest]] + [c for j, c in enumerate(occurrences) if j != longest]:
        scores += table[:, i]
    score_of = dict(zip(candidates.tolist(), scores.tolist()))
    ranked = sorted(score_of, key=lambda key: (-score_of[key], chunks[key][1]))[:k]
    return [(chunks[key][0], score_of[key]) for key in ranked]
