"""Metrics: hand cases with expected values as arithmetic, edge cases, and parity with pytrec_eval."""

from __future__ import annotations

import copy
from math import log2

import numpy as np
import pytest

from glassrag.errors import ConfigError, UnknownNameError
from glassrag.evaluate.metrics import (
    METRICS,
    average_precision,
    evaluate_run,
    hit_at,
    mean_of,
    metric_value,
    ndcg_at,
    parse_metric,
    precision_at,
    recall_at,
    reciprocal_rank,
    top1,
)

# R = 3 relevant (a, c, f); b judged non-relevant, x judged with a negative grade.
LABELS = {"a": 2, "b": 0, "c": 1, "f": 3, "x": -1}
RANKED = ["a", "b", "c", "d", "e"]


# --- hand cases -------------------------------------------------------------

def test_recall() -> None:
    assert recall_at(RANKED, LABELS, 1) == pytest.approx(1 / 3)
    assert recall_at(RANKED, LABELS, 3) == pytest.approx(2 / 3)
    assert recall_at(RANKED, LABELS, 5) == pytest.approx(2 / 3)


def test_precision_divides_by_k_even_when_fewer_retrieved() -> None:
    assert precision_at(RANKED, LABELS, 1) == pytest.approx(1 / 1)
    assert precision_at(RANKED, LABELS, 3) == pytest.approx(2 / 3)
    assert precision_at(RANKED, LABELS, 10) == pytest.approx(2 / 10)


def test_hit_and_top1() -> None:
    assert hit_at(["b", "c"], LABELS, 1) == 0.0
    assert hit_at(["b", "c"], LABELS, 2) == 1.0
    assert top1(["b", "c"], LABELS) == 0.0
    assert top1(RANKED, LABELS) == 1.0


def test_reciprocal_rank_with_and_without_cutoff() -> None:
    assert reciprocal_rank(["b", "d", "c"], LABELS) == pytest.approx(1 / 3)
    assert reciprocal_rank(["b", "d", "c"], LABELS, k=3) == pytest.approx(1 / 3)
    assert reciprocal_rank(["b", "d", "c"], LABELS, k=2) == 0.0
    assert reciprocal_rank(["b", "d"], LABELS) == 0.0


def test_ndcg_binary() -> None:
    relevant = {"a": 1, "c": 1}
    assert ndcg_at(["a", "b", "c"], relevant, 3) == pytest.approx(
        (1 / log2(2) + 1 / log2(4)) / (1 / log2(2) + 1 / log2(3)))


def test_ndcg_graded_ideal_includes_unretrieved_relevant() -> None:
    # f (grade 3) is never retrieved but sets the ideal; x (-1) and b (0) add no gain.
    assert ndcg_at(["a", "b", "c"], LABELS, 3) == pytest.approx(
        (2 / log2(2) + 1 / log2(4)) / (3 / log2(2) + 2 / log2(3) + 1 / log2(4)))
    assert ndcg_at(["x", "a"], LABELS, 2) == pytest.approx(
        (0 + 2 / log2(3)) / (3 / log2(2) + 2 / log2(3)))


def test_average_precision_with_and_without_cutoff() -> None:
    assert average_precision(RANKED, LABELS) == pytest.approx((1 / 1 + 2 / 3) / 3)
    assert average_precision(RANKED, LABELS, k=2) == pytest.approx((1 / 1) / 3)
    assert average_precision(["b", "a", "d", "c"], {"a": 1, "c": 1}) == pytest.approx((1 / 2 + 2 / 4) / 2)


# --- edge cases -------------------------------------------------------------

def test_duplicates_count_at_their_first_rank_only() -> None:
    relevant = {"a": 1, "c": 1}
    ranked = ["b", "b", "a", "a", "c"]  # deduplicated: b, a, c
    assert reciprocal_rank(ranked, relevant) == pytest.approx(1 / 2)
    assert precision_at(ranked, relevant, 2) == pytest.approx(1 / 2)
    assert recall_at(ranked, relevant, 3) == pytest.approx(2 / 2)
    assert precision_at(ranked, relevant, 3) == pytest.approx(2 / 3)
    assert ndcg_at(ranked, relevant, 3) == pytest.approx(
        (1 / log2(3) + 1 / log2(4)) / (1 / log2(2) + 1 / log2(3)))
    assert average_precision(ranked, relevant) == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_empty_ranking_scores_zero() -> None:
    for name in ["ndcg@10", "recall@10", "precision@5", "hit@5", "mrr", "mrr@10", "map", "map@100", "top1"]:
        assert metric_value(name, [], LABELS) == 0.0


def test_no_relevant_labels_scores_zero() -> None:
    for labels in [{}, {"a": 0, "b": -1}]:
        for name in ["ndcg@10", "recall@10", "precision@5", "hit@5", "mrr", "map", "top1"]:
            assert metric_value(name, ["a", "b"], labels) == 0.0


def test_k_larger_than_list() -> None:
    relevant = {"a": 1, "b": 1}
    assert recall_at(["a"], relevant, 100) == pytest.approx(1 / 2)
    assert precision_at(["a"], relevant, 100) == pytest.approx(1 / 100)
    assert ndcg_at(["a"], relevant, 100) == pytest.approx((1 / log2(2)) / (1 / log2(2) + 1 / log2(3)))
    assert average_precision(["a"], relevant, k=100) == pytest.approx((1 / 1) / 2)


def test_every_value_is_a_float() -> None:
    for name in ["ndcg@3", "recall@3", "precision@3", "hit@3", "mrr", "map", "top1"]:
        assert type(metric_value(name, RANKED, LABELS)) is float
    assert type(recall_at(RANKED, LABELS, 3)) is float


def test_inputs_are_not_mutated() -> None:
    ranked, labels = ["b", "b", "a"], {"a": 1, "b": 0}
    run, qrels = {"q": list(ranked)}, {"q": dict(labels)}
    before = copy.deepcopy((ranked, labels, run, qrels))
    ndcg_at(ranked, labels, 2)
    evaluate_run(run, qrels, ["ndcg@2", "mrr"])
    assert (ranked, labels, run, qrels) == before


# --- names ------------------------------------------------------------------

def test_names_match_the_functions() -> None:
    assert metric_value("ndcg@3", RANKED, LABELS) == ndcg_at(RANKED, LABELS, 3)
    assert metric_value("recall@3", RANKED, LABELS) == recall_at(RANKED, LABELS, 3)
    assert metric_value("precision@3", RANKED, LABELS) == precision_at(RANKED, LABELS, 3)
    assert metric_value("hit@1", RANKED, LABELS) == hit_at(RANKED, LABELS, 1)
    assert metric_value("mrr", ["b", "c"], LABELS) == reciprocal_rank(["b", "c"], LABELS)
    assert metric_value("mrr@1", ["b", "c"], LABELS) == reciprocal_rank(["b", "c"], LABELS, k=1)
    assert metric_value("map", RANKED, LABELS) == average_precision(RANKED, LABELS)
    assert metric_value("map@2", RANKED, LABELS) == average_precision(RANKED, LABELS, k=2)
    assert metric_value("top1", RANKED, LABELS) == top1(RANKED, LABELS)
    assert metric_value("NDCG@3", RANKED, LABELS) == ndcg_at(RANKED, LABELS, 3)


def test_parse_metric() -> None:
    assert parse_metric("ndcg@10") == ("ndcg", 10)
    assert parse_metric("mrr") == ("mrr", None)
    assert parse_metric("top1") == ("top1", 1)
    assert set(METRICS) == {"ndcg", "recall", "precision", "hit", "mrr", "map", "top1"}


def test_unknown_name_lists_the_valid_names() -> None:
    with pytest.raises(UnknownNameError) as err:
        metric_value("bleu@4", RANKED, LABELS)
    assert "bleu@4" in err.value.problem
    assert "ndcg@k" in err.value.hint and "mrr" in err.value.hint and "top1" in err.value.hint


@pytest.mark.parametrize("name", ["ndcg@0", "ndcg@-1", "ndcg@1.5", "ndcg@x", "ndcg@", "ndcg", "recall", "top1@3"])
def test_bad_cutoff_in_a_name(name: str) -> None:
    with pytest.raises(ConfigError):
        metric_value(name, RANKED, LABELS)


@pytest.mark.parametrize("k", [0, -3, 2.0, "5", True, None])
def test_bad_cutoff_argument(k: object) -> None:
    with pytest.raises(ConfigError):
        ndcg_at(RANKED, LABELS, k)  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        recall_at(RANKED, LABELS, k)  # type: ignore[arg-type]


def test_a_string_is_not_a_ranking() -> None:
    with pytest.raises(ConfigError):
        recall_at("abc", {"a": 1}, 3)


# --- whole runs ---------------------------------------------------------------

def test_evaluate_run_skips_unjudged_queries_and_zeroes_missing_ones() -> None:
    run = {"q1": ["a", "b"], "q2": ["c"], "q4": ["a"]}
    qrels = {"q1": {"b": 1}, "q2": {"c": 0}, "q3": {"z": 2}}
    result = evaluate_run(run, qrels, ["mrr", "recall@1"])
    assert result == {"mrr": {"q1": 1 / 2, "q3": 0.0}, "recall@1": {"q1": 0 / 1, "q3": 0.0}}
    assert mean_of(result["mrr"]) == pytest.approx((1 / 2 + 0) / 2)


def test_evaluate_run_edges() -> None:
    assert evaluate_run({"q": ["a"]}, {"q": {"a": 1}}, []) == {}
    assert evaluate_run({}, {}, ["ndcg@10", "mrr"]) == {"ndcg@10": {}, "mrr": {}}
    assert mean_of({}) == 0.0
    with pytest.raises(UnknownNameError):
        evaluate_run({}, {}, ["ndcg@10", "nope"])


# --- parity with trec_eval ----------------------------------------------------

TREC_NAMES = {
    "ndcg@10": "ndcg_cut_10",
    "recall@100": "recall_100",
    "mrr": "recip_rank",
    "precision@5": "P_5",
    "map@100": "map_cut_100",
    "map": "map",
}


def _random_collection(seed: int = 13, queries: int = 50) -> tuple[dict, dict]:
    """Graded qrels (with non-relevant and negative grades) and a run with duplicates, one query absent."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(200)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for q in range(queries):
        qid = f"q{q}"
        judged = rng.choice(60, size=int(rng.integers(1, 20)), replace=False)
        grades = [-1, 0, 0, 1, 2, 3] if q % 7 else [-1, 0]  # every 7th query has nothing relevant
        qrels[qid] = {pool[i]: int(rng.choice(grades)) for i in judged}
        if q == 11:
            qrels[qid][pool[int(judged[0])]] = 2
            continue  # judged relevant but absent from the run
        weights = np.where(np.arange(200) < 60, 8.0, 1.0)  # judged ids rank high often enough
        picked = rng.choice(200, size=int(rng.integers(1, 150)), replace=False, p=weights / weights.sum())
        ranked = [pool[i] for i in picked]
        if q % 5 == 0:
            ranked = ranked + ranked[: len(ranked) // 2]  # repeats must change nothing
        run[qid] = ranked
    return run, qrels


def test_parity_with_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels = _random_collection()
    ours = evaluate_run(run, qrels, list(TREC_NAMES))

    # trec_eval sorts by score: descending scores in our order, no ties, first occurrence only.
    trec_run = {qid: {doc: float(1000 - rank) for rank, doc in enumerate(dict.fromkeys(ranked))}
                for qid, ranked in run.items()}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_NAMES.values())).evaluate(trec_run)

    scored = {qid for qid, labels in qrels.items() if any(g > 0 for g in labels.values())}
    assert "q11" in scored and "q0" not in scored and len(scored) > 30
    for name, trec_name in TREC_NAMES.items():
        assert set(ours[name]) == scored
        for qid, value in ours[name].items():
            expected = theirs.get(qid, {}).get(trec_name, 0.0)  # absent from run: 0, as trec_eval -c
            assert value == pytest.approx(expected, abs=1e-4), (name, qid)
    assert ours["mrr"]["q11"] == 0.0


def test_per_query_functions_agree_with_evaluate_run() -> None:
    run, qrels = _random_collection(seed=5, queries=20)
    names = ["ndcg@10", "recall@100", "precision@5", "hit@3", "mrr@10", "map", "top1"]
    result = evaluate_run(run, qrels, names)
    for name in names:
        for qid, value in result[name].items():
            assert value == pytest.approx(metric_value(name, run.get(qid, []), qrels[qid]), abs=1e-12)


def test_ndcg_cuts_the_ideal_ranking_at_k_too():
    """Two relevant documents, k = 1, the first ranked relevant: DCG@1 = IDCG@1 = 1. An ideal
    ranking left uncut would give 1 / (1 + 1/log2(3))."""
    from glassrag.evaluate.metrics import evaluate_run

    # with ndcg@10 asked too, both rankings are judged to depth 10
    got = evaluate_run({"q": ["r1", "x"]}, {"q": {"r1": 1, "r2": 1}}, ["ndcg@1", "ndcg@10"])
    assert got["ndcg@1"]["q"] == 1.0


# What a user reads when a metric name or a cutoff is wrong (they type them in --metrics);
# written after mutation testing found the messages unpinned (issue 13, docs/testing.md).

def problem_and_hint(call) -> tuple[str, str]:
    with pytest.raises(ConfigError) as err:
        call()
    return err.value.problem, err.value.hint


def test_an_unknown_metric_lists_every_valid_name():
    assert problem_and_hint(lambda: parse_metric("bleu@4")) == (
        "unknown metric 'bleu@4'",
        "choose one of: hit@k, map, map@k, mrr, mrr@k, ndcg@k, precision@k, recall@k, top1")


@pytest.mark.parametrize("name, problem, hint", [
    ("top1@3", "metric 'top1@3' takes no cutoff", "write 'top1'"),
    ("ndcg", "metric 'ndcg' needs a cutoff", "write it as 'ndcg@k', e.g. 'ndcg@10'"),
    ("recall@0", "metric 'recall@0': the cutoff after '@' must be a whole number ≥ 1",
     "write it as 'recall@k', e.g. 'recall@10'"),
    ("mrr@x", "metric 'mrr@x': the cutoff after '@' must be a whole number ≥ 1",
     "write it as 'mrr@k', e.g. 'mrr@10'"),
])
def test_a_wrong_cutoff_says_how_to_write_it(name: str, problem: str, hint: str):
    assert problem_and_hint(lambda: parse_metric(name)) == (problem, hint)


def test_a_bad_k_and_a_string_ranking_say_what_to_pass():
    assert problem_and_hint(lambda: ndcg_at(RANKED, LABELS, 0)) == (
        "a metric cutoff k must be a whole number ≥ 1, got 0",
        "give the cutoff as a positive integer, e.g. k=10 or 'ndcg@10'")
    assert problem_and_hint(lambda: recall_at("abc", {"a": 1}, 3)) == (
        "a ranking must be a sequence of ids, got the string 'abc'", "pass a list of ids, best first")
