"""What the gate can read about one question, all from the trace and the index: the
candidate signals of "the documents hold an answer". Every signal is oriented so that a
higher value means "more likely answerable".

| signal | value |
|---|---|
| `top:<stage>` | the best score of a scoring stage (BM25 sum, cosine, fused score, reranker probability) |
| `bm25_norm` | top BM25 / Σ_{t ∈ q} IDF(t)·(k1 + 1): the share of the question's largest attainable score (a chunk holding every term with a saturated tf) that the best chunk reached |
| `term_share` | Σ_{t ∈ q ∩ top} IDF(t) / Σ_{t ∈ q} IDF(t) over the question's distinct terms: how much of the question, weighted by rarity, the top passage contains |
| `coverage` | the same over the union of the top k passages (what the answer shows) |
| `bm25_top` | the highest BM25 score of any chunk: how much lexical evidence the best match holds, on the corpus's own scale (grows with the question's length and rarity, unlike `bm25_norm`) |
| `margin` | s₁ − s₅ of the scoring stage: how far the best candidate stands out (s₅ = the last score when fewer than 5) |
| `known_share` | Σ IDF over the question's distinct terms the index knows / Σ IDF over all of them |
| `rarest_held` | 1 − max_{t ∈ q, t ∉ top k} IDF(t) / IDF(df = 0): 1 when the passages the answer shows hold every question term, near 0 when a term the index has never seen (or its rarest one) is in none of them |
| `agreement` | mean over pairs of retrievers (answering and observed) of the size of top5(a) ∩ top5(b), over 5 |

The maximum attainable BM25 follows from tf·(k1+1)/(tf + K) < k1 + 1 for every tf and
length. A question term the index has never seen counts, in every denominator, with the
largest IDF a term can have (document frequency 0).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

import numpy as np

from glassrag.lexical.bm25 import idf_lucene
from glassrag.schema import Kind, StageTrace


def top_score(trace: StageTrace) -> float:
    return float(trace.hits[0].score) if trace.hits else 0.0


def margin(trace: StageTrace, depth: int = 5) -> float:
    if not trace.hits:
        return 0.0
    last = trace.hits[min(depth, len(trace.hits)) - 1]
    return float(trace.hits[0].score - last.score)


def agreement(retrieved: Sequence[StageTrace], depth: int = 5) -> float:
    """Mean pairwise overlap of the retrievers' top `depth` chunk sets (0 with one retriever)."""
    tops = [{h.chunk_id for h in t.hits[:depth]} for t in retrieved]
    pairs = list(combinations(tops, 2))
    if not pairs:
        return 0.0
    return float(np.mean([len(a & b) / depth for a, b in pairs]))


def held(bm25: Any, rows: Sequence[int], term_ids: np.ndarray) -> np.ndarray:
    """held[i, j]: whether term j occurs in chunk rows[i]; one search of each term's sorted
    column for every row at once (a search per row and term was 4 % of the web server's
    samples under bench/load.py, issue 30)."""
    indptr, indices = bm25.scores.indptr, bm25.scores.indices
    wanted = np.asarray(rows, dtype=np.int64)
    out = np.zeros((wanted.size, len(term_ids)), dtype=bool)
    if not wanted.size:
        return out
    for j, t in enumerate(term_ids.tolist()):
        column = indices[int(indptr[t]):int(indptr[t + 1])]
        at = np.minimum(np.searchsorted(column, wanted), max(column.size - 1, 0))
        out[:, j] = column[at] == wanted if column.size else False
    return out


def lexical_signals(tokens: Sequence[str], bm25: Any, rows: Sequence[int],
                    top_bm25: float) -> dict[str, float]:
    """bm25_norm, known_share, term_share (top chunk) and coverage (top k chunks `rows`,
    best first; `top_bm25` is the top chunk's BM25 score).

    A question term the index has never seen weighs as much as the rarest possible term,
    IDF(df = 0) = ln((N + 0.5) / 0.5 + 1): a question about something the documents never
    name cannot be answered by them, and that is evidence the gate can use.
    """
    vocab = bm25.counts.vocab
    unseen = float(idf_lucene(bm25.scores.shape[0], np.zeros(1))[0])

    def idf(t: str) -> float:
        return float(bm25.idf[vocab[t]]) if t in vocab else unseen

    attainable = sum(idf(t) for t in tokens) * (bm25.k1 + 1.0)
    distinct = list(dict.fromkeys(tokens))
    weights = np.array([idf(t) for t in distinct])
    total = float(weights.sum())
    out = {"bm25_norm": top_bm25 / attainable if attainable > 0 else 0.0,
           "known_share": 0.0, "term_share": 0.0, "coverage": 0.0, "rarest_held": 1.0}
    if total <= 0:
        return out
    known = np.array([t in vocab for t in distinct])
    out["known_share"] = float(weights[known].sum() / total)
    ids = np.array([vocab[t] for t in distinct if t in vocab], dtype=np.int64)
    found = held(bm25, rows, ids)
    if len(rows):
        out["term_share"] = float(weights[known][found[0]].sum() / total)
    held_any = found.any(axis=0)
    out["coverage"] = float(weights[known][held_any].sum() / total)
    absent = np.r_[weights[known][~held_any], weights[~known]]
    out["rarest_held"] = 1.0 - float(absent.max()) / unseen if absent.size else 1.0
    return out


def gather(trace: Sequence[StageTrace], tokens: Sequence[str], bm25: Any, bm25_scores: np.ndarray,
           position: dict[str, int], k: int) -> dict[str, float]:
    """Every candidate signal for one question, from the stages run so far."""
    out: dict[str, float] = {}
    for t in trace:
        if Kind(t.kind).scores or t.kind == Kind.OBSERVE:  # an observed retriever's top score too
            out[f"top:{t.name}"] = top_score(t)
    ranking = [t for t in trace if Kind(t.kind).ranks]
    final = ranking[-1] if ranking else None
    scoring = [t for t in trace if Kind(t.kind).scores]
    if scoring:
        out["margin"] = margin(scoring[-1])
    rows = [position[h.chunk_id] for h in final.hits[:k]] if final is not None else []
    top_bm25 = float(bm25_scores[rows[0]]) if rows else 0.0
    out.update(lexical_signals(tokens, bm25, rows, top_bm25))
    out["bm25_top"] = float(bm25_scores.max()) if bm25_scores.size else 0.0
    retrievers = [t for t in trace if t.kind in (Kind.RETRIEVE, Kind.OBSERVE)]
    if len(retrievers) > 1:
        out["agreement"] = agreement(retrievers)
    return out
