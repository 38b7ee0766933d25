"""compare_runs on hand-built runs: which questions and metrics are paired, the means, the
direction and verdict, the test chosen and its p-value, Holm's correction and the settings
that differ. Every expected figure is worked out from the per-question values below."""

from typing import Any

import pytest

from glassrag.errors import RunFileError
from glassrag.evaluate.compare import (compare_runs, dense_metrics, dense_question_metrics,
                                       settings_changed)
from glassrag.schema import MCNEMAR, RUN_FORMAT, RUN_FORMAT_VERSION, QuestionRecord, Run, flat_spec
from glassrag.stats import paired_randomization


def run(per_question: dict[str, dict[str, dict[str, float]]], config: dict[str, Any] | None = None,
        index_settings: dict[str, Any] | None = None, stages: dict[str, Any] | None = None,
        records: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """A minimal valid run: question id -> section -> metric -> value; the summary lists
    every metric any question has (its value is not what compare reads)."""
    summary: dict[str, dict[str, Any]] = {"ranking": {}, "answer": {}}
    for metrics in per_question.values():
        for section, values in metrics.items():
            for name in values:
                summary[section][name] = {"value": 0.0, "low": 0.0, "high": 0.0, "n": 1}
    return {"format": RUN_FORMAT, "format_version": RUN_FORMAT_VERSION, "glassrag_version": "test",
            "code_version": None, "created": "", "k": 5, "seconds": 0.0,
            "index": {"settings": index_settings or {}}, "config": config or {}, "golden": {},
            "stages": stages or {}, "by_kind": {}, "losses": {}, "gate": {},
            "ranking": {"stage": "fuse", "metrics": summary["ranking"]},
            "answer": {"stage": "answer", "metrics": summary["answer"]},
            "questions": [{"id": q, "answerable": True, "stages": {}, "metrics": m,
                           **(records or {}).get(q, {})} for q, m in per_question.items()]}


def rows_by_metric(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["metric"]: r for r in result["rows"]}


def test_a_binary_metric_counts_flips_and_takes_mcnemar():
    # hit@1: q1 and q2 gained, q3 lost, q4 kept 1 in both
    a = run({"q1": {"answer": {"hit@1": 0.0}}, "q2": {"answer": {"hit@1": 0.0}},
             "q3": {"answer": {"hit@1": 1.0}}, "q4": {"answer": {"hit@1": 1.0}}})
    b = run({"q1": {"answer": {"hit@1": 1.0}}, "q2": {"answer": {"hit@1": 1.0}},
             "q3": {"answer": {"hit@1": 0.0}}, "q4": {"answer": {"hit@1": 1.0}}})
    result = compare_runs(a, b, "a.json", "b.json")
    row = rows_by_metric(result)["answer hit@1"]
    assert row == {"metric": "answer hit@1", "section": "answer", "better": "higher",
                   "a": 2 / 4, "b": 3 / 4, "diff": 3 / 4 - 2 / 4, "direction": "UP", "verdict": "better",
                   # discordant pairs 2 and 1: p = 2 · P(X ≤ 1), X ~ Binomial(3, 1/2) = 2 · 4/8
                   "p": 1.0, "test": "McNemar exact", "n": 4, "improved": 2, "degraded": 1,
                   "p_holm": 1.0}
    assert result["flips"] == {"answer hit@1": {"improved": ["q1", "q2"], "degraded": ["q3"]}}
    assert (result["a"], result["b"], result["questions"]) == ("a.json", "b.json", 4)
    assert result["stages"] == {"a": {"ranking": "fuse", "answer": "answer"},
                                "b": {"ranking": "fuse", "answer": "answer"}}


def test_mcnemar_p_below_one():
    # five questions all gained, none lost: p = 2 · P(X ≤ 0), X ~ Binomial(5, 1/2) = 2/32
    ids = [f"q{i}" for i in range(5)]
    a = run({q: {"answer": {"hit@5": 0.0}} for q in ids})
    b = run({q: {"answer": {"hit@5": 1.0}} for q in ids})
    row = rows_by_metric(compare_runs(a, b))["answer hit@5"]
    assert row["p"] == pytest.approx(2 / 32) and row["p_holm"] == pytest.approx(2 / 32)
    assert (row["improved"], row["degraded"], row["direction"]) == (5, 0, "UP")


def test_a_graded_metric_takes_the_seeded_randomisation_test():
    # every question gains 0.25: only the two all-equal sign patterns of 16 reach the mean
    ids = ["q1", "q2", "q3", "q4"]
    x = [0.25, 0.5, 0.0, 0.5]
    a = run({q: {"ranking": {"mrr@10": v}} for q, v in zip(ids, x)})
    b = run({q: {"ranking": {"mrr@10": v + 0.25}} for q, v in zip(ids, x)})
    row = rows_by_metric(compare_runs(a, b))["ranking mrr@10"]
    assert row["test"] == "paired randomisation"
    assert row["p"] == pytest.approx(2 / 16, abs=0.01)
    # the same draws every time: 10,000 resamples seeded with 0
    assert row["p"] == paired_randomization([v + 0.25 for v in x], x, resamples=10000, seed=0)
    assert row["p"] != paired_randomization([v + 0.25 for v in x], x, resamples=10000, seed=1)
    assert (row["a"], row["b"], row["diff"]) == (1.25 / 4, 2.25 / 4, 2.25 / 4 - 1.25 / 4)
    assert (row["improved"], row["degraded"], row["verdict"]) == (4, 0, "better")
    assert "ranking mrr@10" not in compare_runs(a, b)["flips"]


def test_lower_is_better_turns_the_verdict_and_the_flips():
    a = run({"q1": {"answer": {"declined_answerable": 1.0}}, "q2": {"answer": {"declined_answerable": 0.0}},
             "q3": {"answer": {"declined_answerable": 1.0}}})
    b = run({"q1": {"answer": {"declined_answerable": 0.0}}, "q2": {"answer": {"declined_answerable": 0.0}},
             "q3": {"answer": {"declined_answerable": 1.0}}})
    row = rows_by_metric(compare_runs(a, b))["answer declined_answerable"]
    assert (row["better"], row["direction"], row["verdict"]) == ("lower", "DOWN", "better")
    assert (row["improved"], row["degraded"], row["test"]) == (1, 0, "McNemar exact")
    back = rows_by_metric(compare_runs(b, a))["answer declined_answerable"]
    assert (back["direction"], back["verdict"], back["improved"], back["degraded"]) == ("UP", "worse", 0, 1)


def test_a_higher_is_better_metric_that_fell_is_worse():
    a = run({"q1": {"ranking": {"ndcg@10": 0.5}}, "q2": {"ranking": {"ndcg@10": 0.5}}})
    b = run({"q1": {"ranking": {"ndcg@10": 0.25}}, "q2": {"ranking": {"ndcg@10": 0.5}}})
    row = rows_by_metric(compare_runs(a, b))["ranking ndcg@10"]
    assert (row["direction"], row["verdict"], row["improved"], row["degraded"]) == ("DOWN", "worse", 0, 1)
    assert row["diff"] == (0.25 + 0.5) / 2 - (0.5 + 0.5) / 2


def test_differences_within_rounding_are_the_same():
    a = run({"q1": {"ranking": {"ndcg@10": 0.5}}})
    b = run({"q1": {"ranking": {"ndcg@10": 0.5 + 1e-13}}})
    row = rows_by_metric(compare_runs(a, b))["ranking ndcg@10"]
    assert (row["direction"], row["verdict"]) == ("=", "same")
    # 1e-10 is beyond rounding: it counts, up or down
    up = rows_by_metric(compare_runs(a, run({"q1": {"ranking": {"ndcg@10": 0.5 + 1e-10}}})))["ranking ndcg@10"]
    down = rows_by_metric(compare_runs(a, run({"q1": {"ranking": {"ndcg@10": 0.5 - 1e-10}}})))["ranking ndcg@10"]
    assert (up["direction"], up["verdict"], down["direction"], down["verdict"]) == ("UP", "better", "DOWN", "worse")


@pytest.mark.parametrize("metric, b, direction, verdict", [
    # exactly 1e-12 is still rounding, either way
    ("ranking ndcg@10", 1e-12, "=", "same"), ("ranking ndcg@10", -1e-12, "=", "same"),
    ("answer declined_answerable", 1e-12, "=", "same"), ("answer declined_answerable", -1e-12, "=", "same"),
    # 7.5e-13 is below it: the verdict must not scale the difference
    ("ranking ndcg@10", 7.5e-13, "=", "same"), ("answer declined_answerable", -7.5e-13, "=", "same"),
])
def test_the_rounding_bound_is_exclusive(metric: str, b: float, direction: str, verdict: str):
    section, name = metric.split(" ")
    row = rows_by_metric(compare_runs(run({"q1": {section: {name: 0.0}}}),
                                      run({"q1": {section: {name: b}}})))[metric]
    assert (row["diff"], row["direction"], row["verdict"]) == (b, direction, verdict)


def test_only_shared_questions_and_metrics_are_paired():
    a = run({"q1": {"answer": {"hit@1": 1.0, "only_a": 1.0}}, "q2": {"answer": {"hit@1": 0.0}},
             "gone": {"answer": {"hit@1": 1.0}}})
    b = run({"q1": {"answer": {"hit@1": 1.0}}, "q2": {"answer": {"hit@1": 1.0}},
             "new": {"answer": {"hit@1": 0.0}}})
    result = compare_runs(a, b)
    assert result["questions"] == 2
    assert list(rows_by_metric(result)) == ["answer hit@1"]
    row = rows_by_metric(result)["answer hit@1"]
    assert (row["n"], row["a"], row["b"]) == (2, 1 / 2, 2 / 2)


def test_a_metric_only_some_questions_have_is_paired_on_those():
    a = run({"q1": {"answer": {"hit@1": 1.0, "answer_visible@5": 1.0}}, "q2": {"answer": {"hit@1": 0.0}},
             "q3": {"answer": {"hit@1": 0.0, "answer_visible@5": 0.0}}})
    b = run({"q1": {"answer": {"hit@1": 1.0, "answer_visible@5": 1.0}}, "q2": {"answer": {"hit@1": 0.0}},
             "q3": {"answer": {"hit@1": 0.0, "answer_visible@5": 1.0}}})
    row = rows_by_metric(compare_runs(a, b))["answer answer_visible@5"]
    assert (row["n"], row["a"], row["b"], row["improved"]) == (2, 1 / 2, 2 / 2, 1)


def test_a_metric_no_shared_question_has_is_left_out_and_the_next_is_compared():
    a = run({"q1": {"answer": {"answer_visible@5": 1.0, "hit@1": 1.0}}, "q2": {"answer": {"hit@1": 0.0}}})
    b = run({"q1": {"answer": {"hit@1": 1.0}}, "q2": {"answer": {"answer_visible@5": 1.0}}})
    assert list(rows_by_metric(compare_runs(a, b))) == ["answer hit@1"]


def test_holm_adjusts_across_the_rows():
    # two metrics, p = 2/32 each: Holm multiplies the smaller by 2 and keeps the order
    ids = [f"q{i}" for i in range(5)]
    a = run({q: {"answer": {"hit@1": 0.0, "hit@5": 0.0}} for q in ids})
    b = run({q: {"answer": {"hit@1": 1.0, "hit@5": 1.0}} for q in ids})
    rows = compare_runs(a, b)["rows"]
    assert [r["p"] for r in rows] == pytest.approx([2 / 32, 2 / 32])
    assert [r["p_holm"] for r in rows] == pytest.approx([2 * 2 / 32, 2 * 2 / 32])


def test_runs_that_share_no_question_are_refused():
    with pytest.raises(RunFileError) as info:
        compare_runs(run({"q1": {"answer": {"hit@1": 1.0}}}), run({"q2": {"answer": {"hit@1": 1.0}}}),
                     "a.json", "b.json")
    assert (info.value.problem, info.value.hint) == ("a.json and b.json share no question",
                                                     "compare runs of the same golden set")
    with pytest.raises(RunFileError, match="^A and B share no question"):
        compare_runs(run({"q1": {"answer": {"hit@1": 1.0}}}), run({"q2": {"answer": {"hit@1": 1.0}}}))


def test_a_bad_run_file_is_named_in_the_error():
    good = run({"q1": {"answer": {"hit@1": 1.0}}})
    with pytest.raises(RunFileError, match="^old.json: not a glassrag run file"):
        compare_runs({"questions": []}, good, "old.json", "new.json")
    with pytest.raises(RunFileError, match="^new.json: a run file holds one JSON object, not list"):
        compare_runs(good, [1, 2], "old.json", "new.json")
    with pytest.raises(RunFileError, match="^A: a run file holds one JSON object, not list"):
        compare_runs([1, 2], good)
    with pytest.raises(RunFileError, match="^B: a run file holds one JSON object, not list"):
        compare_runs(good, [1, 2])


def test_run_objects_and_dicts_compare_alike():
    a = run({"q1": {"answer": {"hit@1": 0.0}}})
    b = run({"q1": {"answer": {"hit@1": 1.0}}})
    assert compare_runs(Run.from_dict(a), Run.from_dict(b)) == compare_runs(a, b)


@pytest.mark.parametrize("metric, binary", [
    ("answer hit@5", True), ("ranking top1", True), ("answer answer_visible@5", True),
    ("answer declined_answerable", True), ("answer declined_unanswerable", True),
    ("lsa vector_hit", True), ("generation cited", True),
    ("ranking mrr@10", False), ("ranking ndcg@10", False), ("ranking recall@100", False),
    ("lsa mean_top_similarity", False), ("answer reader_accuracy", False),
])
def test_which_metrics_are_compared_by_mcnemar(metric: str, binary: bool):
    assert (flat_spec(metric).paired_test == MCNEMAR) is binary


def test_a_dense_stage_is_compared_on_its_own_figures():
    stages = {"lsa": {"family": "dense", "kind": "observe", "top_score": 0.5},
              "bm25": {"family": "lexical", "kind": "retrieve", "top_score": 7.0}}
    empty = {"lsa": {"family": "dense", "kind": "observe", "top_score": None}}

    def record(stages: dict[str, Any]) -> QuestionRecord:
        return QuestionRecord.from_dict({"id": "q", "answerable": True, "stages": stages})

    assert dense_question_metrics(record(stages)) == {"lsa vector_hit": 1.0, "lsa mean_top_similarity": 0.5}
    assert dense_question_metrics(record(empty)) == {"lsa vector_hit": 0.0, "lsa mean_top_similarity": 0.0}
    assert dense_question_metrics(record({})) == {}
    summary = {"lsa": {"vector_hit": {"value": 0.5, "n": 2}, "hit@1": {"value": 1.0, "n": 2},
                       "mean_top_similarity": {"value": 0.25, "n": 2}}}
    assert dense_metrics(Run.from_dict(run({"q1": {}}, stages=summary))) == {
        "lsa vector_hit": {"value": 0.5, "n": 2}, "lsa mean_top_similarity": {"value": 0.25, "n": 2}}
    a = run({"q1": {"answer": {"hit@1": 1.0}}, "q2": {"answer": {"hit@1": 1.0}}}, stages=summary,
            records={"q1": {"stages": stages}, "q2": {"stages": stages}})
    b = run({"q1": {"answer": {"hit@1": 1.0}}, "q2": {"answer": {"hit@1": 1.0}}}, stages=summary,
            # a run file's stage that is not an object is refused (run_shape), so b's bm25 stage returned nothing
            records={"q1": {"stages": stages}, "q2": {"stages": {**empty, "bm25": {**stages["bm25"], "top_score": None}}}})
    rows = rows_by_metric(compare_runs(a, b))
    assert (rows["lsa vector_hit"]["a"], rows["lsa vector_hit"]["b"]) == (1.0, 0.5)
    assert rows["lsa vector_hit"]["test"] == "McNemar exact" and rows["lsa vector_hit"]["degraded"] == 1
    assert (rows["lsa mean_top_similarity"]["a"], rows["lsa mean_top_similarity"]["b"]) == (0.5, 0.25)
    assert rows["lsa mean_top_similarity"]["test"] == "paired randomisation"
    assert rows["lsa mean_top_similarity"]["section"] == "lsa"


def test_settings_changed_lists_query_settings_and_the_index_chunking_and_analysis():
    a = run({"q1": {}}, config={"answer": {"k": 5, "excerpt_chars": 300}, "fuse": {"method": "rrf"}},
            index_settings={"chunk": {"size": 200, "unit": "words"}, "analyze": {"stem": True},
                            "bm25": {"k1": 1.2}, "lsa": {"dim": 64}})
    b = run({"q1": {}}, config={"answer": {"k": 3, "excerpt_chars": 300}, "gate": {"rule": "cost"}},
            index_settings={"chunk": {"size": 100, "unit": "words"}, "analyze": {"stem": True},
                            "bm25": {"k1": 0.9}, "lsa": {"dim": 32}})
    assert settings_changed(Run.from_dict(a), Run.from_dict(b)) == [
        {"setting": "answer.k", "a": 5, "b": 3},
        {"setting": "fuse.method", "a": "rrf", "b": None},
        {"setting": "gate.rule", "a": None, "b": "cost"},
        {"setting": "index chunk.size", "a": 200, "b": 100},
    ]
    assert compare_runs(a, b)["settings"] == settings_changed(Run.from_dict(a), Run.from_dict(b))
    same = Run.from_dict(a)
    assert settings_changed(same, same) == []


def test_an_index_without_settings_differs_by_all_of_the_others():
    a = run({"q1": {}}, index_settings={"analyze": {"stem": True}})
    b = run({"q1": {}})
    del b["index"]["settings"]
    assert settings_changed(Run.from_dict(a), Run.from_dict(b)) == [
        {"setting": "index analyze.stem", "a": True, "b": None}]
    assert settings_changed(Run.from_dict(b), Run.from_dict(a)) == [
        {"setting": "index analyze.stem", "a": None, "b": True}]


def test_the_off_topic_questions_are_paired_by_id_beside_the_golden_set():
    # off-topic test questions o1..o4: a answered o1, o2 and o3; b answered o3 only
    def with_offtopic(answered: list[str]) -> dict[str, Any]:
        r = run({"q1": {"answer": {"hit@1": 1.0}}})
        r["answer"]["metrics"]["declined_offtopic"] = {"value": 0.0, "low": 0.0, "high": 0.0, "n": 4}
        r["gate"] = {"offtopic": {"questions": 4, "asked": ["o1", "o2", "o3", "o4"], "answered": answered}}
        return r

    result = compare_runs(with_offtopic(["o1", "o2", "o3"]), with_offtopic(["o3"]))
    row = rows_by_metric(result)["answer declined_offtopic"]
    assert (row["a"], row["b"], row["n"], row["improved"], row["degraded"]) == (1 / 4, 3 / 4, 4, 2, 0)
    assert row["test"] == "McNemar exact" and row["p"] == 2 * (1 / 2) ** 2  # 2 · P(X ≤ 0), X ~ B(2, 1/2)
    assert result["flips"]["answer declined_offtopic"] == {"improved": ["o1", "o2"], "degraded": []}
    assert result["questions"] == 1  # the golden set's questions; the off-topic set is beside it
    # a run written before the asked ids were kept has no per-question off-topic figures
    old = with_offtopic(["o3"])
    del old["gate"]["offtopic"]["asked"]
    assert "answer declined_offtopic" not in rows_by_metric(compare_runs(old, with_offtopic(["o3"])))
