"""Per-query retrieval metrics over a ranked list and graded relevance labels.

The conventions are trec_eval's (usnistgov/trec_eval, version 9), so the values
equal pytrec_eval's to rounding:

- `ranked` is ids best first; only the first occurrence of an id counts.
- `relevant` maps ids to grades: a grade > 0 is relevant, 0 or negative is
  judged non-relevant, an absent id is unjudged. Both of the last two have gain 0.
- R is the number of ids with grade > 0. A metric that divides by R, or by an
  ideal DCG, is 0 when the divisor is 0.
- rel_i = 1 if the id at rank i (1-based) is relevant, else 0;
  g_i = max(grade of the id at rank i, 0).

Every metric is one kernel over a (queries × depth) matrix of grades, so one
query and a whole run go through the same vectorised code. Metrics are looked
up by ranx-style names ("ndcg@10", "mrr", "top1") in `METRICS`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice

import numpy as np

from glassrag.errors import ConfigError, UnknownNameError


@dataclass(frozen=True)
class _Judged:
    """Grades of a batch of rankings, zero padded on the right."""

    grades: np.ndarray  # (queries, depth): g_i of the deduplicated ranking
    ideal: np.ndarray  # (queries, depth'): positive grades sorted descending
    num_rel: np.ndarray  # (queries,): R, never truncated


def _padded(rows: list[list[float]]) -> np.ndarray:
    out = np.zeros((len(rows), max((len(r) for r in rows), default=0)))
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def _judge(rankings: Sequence[Sequence[str]], labels: Sequence[Mapping[str, int]],
           depth: int | None) -> _Judged:
    """Look up the grade of each ranked id, keeping only the top `depth` distinct ids."""
    rows, ideal, num_rel = [], [], []
    for ranked, relevant in zip(rankings, labels):
        if isinstance(ranked, str):
            raise ConfigError(f"a ranking must be a sequence of ids, got the string {ranked!r}",
                              "pass a list of ids, best first")
        rows.append([relevant.get(doc, 0) for doc in islice(dict.fromkeys(ranked), depth)])
        positive = sorted((g for g in relevant.values() if g > 0), reverse=True)
        num_rel.append(len(positive))
        ideal.append(positive[:depth])
    return _Judged(np.maximum(_padded(rows), 0.0), _padded(ideal), np.array(num_rel, dtype=float))


def _cut(matrix: np.ndarray, k: int | None) -> np.ndarray:
    return matrix if k is None else matrix[:, :k]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0."""
    return np.divide(numerator, denominator, out=np.zeros(len(numerator)), where=denominator > 0)


def _dcg(gains: np.ndarray) -> np.ndarray:
    """Σ_i g_i / log2(i + 1) over the columns, i = 1 … width."""
    return gains @ (1.0 / np.log2(np.arange(2, gains.shape[1] + 2)))


# Kernels: (judged batch, cutoff or None) -> one value per query.

def _hits(judged: _Judged, k: int | None) -> np.ndarray:
    return _cut(judged.grades, k) > 0


def _recall(judged: _Judged, k: int | None) -> np.ndarray:
    return _ratio(_hits(judged, k).sum(axis=1), judged.num_rel)


def _precision(judged: _Judged, k: int | None) -> np.ndarray:
    return _hits(judged, k).sum(axis=1) / k


def _hit(judged: _Judged, k: int | None) -> np.ndarray:
    return _hits(judged, k).any(axis=1).astype(float)


def _reciprocal_rank(judged: _Judged, k: int | None) -> np.ndarray:
    hits = _hits(judged, k)
    if hits.shape[1] == 0:
        return np.zeros(len(hits))
    return np.where(hits.any(axis=1), 1.0 / (hits.argmax(axis=1) + 1), 0.0)


def _ndcg(judged: _Judged, k: int | None) -> np.ndarray:
    return _ratio(_dcg(_cut(judged.grades, k)), _dcg(_cut(judged.ideal, k)))


def _average_precision(judged: _Judged, k: int | None) -> np.ndarray:
    hits = _hits(judged, k)
    precision = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    return _ratio((precision * hits).sum(axis=1), judged.num_rel)


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"a metric cutoff k must be a whole number ≥ 1, got {k!r}",
                          "give the cutoff as a positive integer, e.g. k=10 or 'ndcg@10'")
    return int(k)


def _one(kernel: Callable[[_Judged, int | None], np.ndarray], ranked: Sequence[str],
         relevant: Mapping[str, int], k: int | None) -> float:
    return float(kernel(_judge([ranked], [relevant], k), k)[0])


def recall_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Recall@k = Σ_{i ≤ k} rel_i / R  (0 when R = 0).

    trec_eval `recall_k`. The denominator is all relevant ids, so recall@k < 1
    whenever R > k.
    """
    return _one(_recall, ranked, relevant, _check_k(k))


def precision_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """P@k = Σ_{i ≤ k} rel_i / k.

    trec_eval `P_k`: divides by k even when fewer than k ids were retrieved.
    """
    return _one(_precision, ranked, relevant, _check_k(k))


def hit_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """Hit@k = 1 if Σ_{i ≤ k} rel_i > 0 else 0 (ranx `hits` > 0; "success@k")."""
    return _one(_hit, ranked, relevant, _check_k(k))


def top1(ranked: Sequence[str], relevant: Mapping[str, int]) -> float:
    """Top-1 accuracy = Hit@1 = rel_1."""
    return hit_at(ranked, relevant, 1)


def reciprocal_rank(ranked: Sequence[str], relevant: Mapping[str, int],
                    k: int | None = None) -> float:
    """RR = 1 / min{i : rel_i = 1}, or 0 when no relevant id is ranked (in the top k).

    Voorhees (1999), "The TREC-8 Question Answering Track Report"; trec_eval
    `recip_rank`. With a cutoff it is RR computed on the top k (ranx `mrr@k`).
    Its mean over queries is MRR.
    """
    return _one(_reciprocal_rank, ranked, relevant, None if k is None else _check_k(k))


def ndcg_at(ranked: Sequence[str], relevant: Mapping[str, int], k: int) -> float:
    """nDCG@k = DCG@k / IDCG@k, with DCG@k = Σ_{i ≤ k} g_i / log2(i + 1)  (0 when IDCG = 0).

    Järvelin & Kekäläinen (2002), "Cumulated gain-based evaluation of IR
    techniques", ACM TOIS 20(4), with trec_eval `ndcg_cut_k`'s choices: the gain
    is the grade itself, and IDCG@k is the DCG of all positive grades in the
    labels sorted descending, whether or not they were retrieved.
    """
    return _one(_ndcg, ranked, relevant, _check_k(k))


def average_precision(ranked: Sequence[str], relevant: Mapping[str, int],
                      k: int | None = None) -> float:
    """AP@k = Σ_{i ≤ k} rel_i · P@i / R  (0 when R = 0).

    trec_eval `map` (no k) and `map_cut_k`: the denominator is every relevant
    id, so relevant ids below the cutoff count as precision 0. Its mean over
    queries is MAP.
    """
    return _one(_average_precision, ranked, relevant, None if k is None else _check_k(k))


@dataclass(frozen=True)
class Metric:
    """One entry of `METRICS`: the kernel and how the name takes a cutoff.

    cutoff: "required" (name@k), "optional" (name or name@k) or a fixed k that
    the name must not repeat (top1 is hit@1).
    """

    kernel: Callable[[_Judged, int | None], np.ndarray]
    cutoff: str | int


METRICS: dict[str, Metric] = {
    "ndcg": Metric(_ndcg, "required"),
    "recall": Metric(_recall, "required"),
    "precision": Metric(_precision, "required"),
    "hit": Metric(_hit, "required"),
    "mrr": Metric(_reciprocal_rank, "optional"),
    "map": Metric(_average_precision, "optional"),
    "top1": Metric(_hit, 1),
}


def _valid_names() -> list[str]:
    names = []
    for base, metric in METRICS.items():
        if metric.cutoff in ("required", "optional"):
            names.append(f"{base}@k")
        if metric.cutoff != "required":
            names.append(base)
    return names


def parse_metric(name: str) -> tuple[str, int | None]:
    """Split a ranx-style name into (base, cutoff): "ndcg@10" -> ("ndcg", 10), "mrr" -> ("mrr", None).

    "top1" parses to ("top1", 1). An unknown base raises UnknownNameError; a
    missing, surplus or malformed cutoff raises ConfigError.
    """
    base, at, k_text = name.strip().lower().partition("@")
    if base not in METRICS:
        raise UnknownNameError("metric", name, _valid_names())
    cutoff = METRICS[base].cutoff
    if isinstance(cutoff, int):
        if at:
            raise ConfigError(f"metric {name!r} takes no cutoff", f"write {base!r}")
        return base, cutoff
    if not at:
        if cutoff == "required":
            raise ConfigError(f"metric {name!r} needs a cutoff", f"write it as '{base}@k', e.g. '{base}@10'")
        return base, None
    if not k_text.isdigit() or int(k_text) < 1:
        raise ConfigError(f"metric {name!r}: the cutoff after '@' must be a whole number ≥ 1",
                          f"write it as '{base}@k', e.g. '{base}@10'")
    return base, int(k_text)


def metric_value(name: str, ranked: Sequence[str], relevant: Mapping[str, int]) -> float:
    """The metric called `name` (see `METRICS`, e.g. "ndcg@10", "mrr") for one query."""
    base, k = parse_metric(name)
    return _one(METRICS[base].kernel, ranked, relevant, k)


def evaluate_run(run: Mapping[str, Sequence[str]], qrels: Mapping[str, Mapping[str, int]],
                 metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """metric name -> {query id: value}, over the queries in `qrels` with a grade > 0.

    Queries without a relevant label are left out (no metric here is defined
    for them); queries missing from `run` score 0, as with `trec_eval -c`.
    All queries are judged once, to the deepest cutoff asked for.
    """
    parsed = [(name, *parse_metric(name)) for name in metrics]
    if not parsed:
        return {}
    qids = [qid for qid, labels in qrels.items() if any(g > 0 for g in labels.values())]
    cutoffs = [k for _, _, k in parsed]
    depth = None if None in cutoffs else max(cutoffs)
    judged = _judge([run.get(qid, ()) for qid in qids], [qrels[qid] for qid in qids], depth)
    return {name: dict(zip(qids, METRICS[base].kernel(judged, k).tolist()))
            for name, base, k in parsed}


def mean_of(per_query: Mapping[str, float]) -> float:
    """(1/|Q|) Σ_q value_q, e.g. MRR from per-query RR; 0.0 for no queries."""
    return math.fsum(per_query.values()) / len(per_query) if per_query else 0.0
