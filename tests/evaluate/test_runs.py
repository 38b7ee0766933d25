import json
import math
import re
from dataclasses import replace
import time
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.compare import RunFileError, compare_runs
from glassrag.evaluate.diagnose import loss_cause
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.offtopic import offtopic_questions
from glassrag.evaluate.relevance import Judge, Judgement
from glassrag.evaluate.records import dense_figures, generation_record, ranking_stage
from glassrag.evaluate.runs import evaluate, write_run_file
from glassrag.evaluate.summary import interval, stage_specs
from glassrag.generate import REFUSED
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.schema import Answer, Generation, Hit, Passage, Run, StageTrace, metric_spec
from glassrag.schema.records import QuestionRecord
from glassrag.stats import mean_interval, wilson_interval

SENSOR = "E-4107 means the tilt sensor lost calibration."
QUESTIONS = [
    Question("hit", "What does E-4107 mean?", True, answers=(Span("manual", "§ 2.1 Sensor errors", SENSOR),),
             kind="identifier"),
    Question("lost", "zebra quantum", True, answers=(Span("manual", "", SENSOR),), kind="paraphrase"),
    Question("gym", "Is there a gym membership?", False, kind="unanswerable"),
    Question("warranty", "How long is the tilt sensor warranty?", False, kind="unanswerable"),
]


def test_run_metrics_causes_and_shape(index):
    run = evaluate(Pipeline(index), QUESTIONS, golden_path="inline")
    by_id = {r.id: r for r in run.questions}
    assert by_id["hit"].stages["fuse"].first_relevant_rank == 1
    assert by_id["hit"].cause is None and by_id["hit"].visible is True
    assert by_id["lost"].cause == "not retrieved"
    assert by_id["gym"].declined and by_id["gym"].cause is None
    assert by_id["warranty"].cause == "answered unanswerable"
    ranking, shown = run.ranking.metrics, run.answer.metrics
    assert run.ranking.stage == "fuse" and run.answer.stage == "answer"
    assert shown["hit@1"]["value"] == (1 + 0) / 2 and shown["hit@1"]["n"] == 2
    assert ranking["mrr@10"]["value"] == (1 / 1 + 0) / 2 and "mrr@10" not in shown
    assert shown["declined_unanswerable"]["value"] == 1 / 2 and "declined_unanswerable" not in ranking
    assert shown["answer_visible@5"]["value"] == 1 / 2
    assert shown["hit@1"]["low"] < 0.5 < shown["hit@1"]["high"]
    assert set(run.stages) == {"bm25", "lsa", "fuse", "gate", "budget", "answer"}
    assert run.losses == {"not retrieved": ["lost"], "answered unanswerable": ["warranty"]}
    assert by_id["hit"].metric("ranking", "mrr@10") == 1.0
    assert by_id["hit"].metric("answer", "hit@5") == 1.0
    data = json.loads(json.dumps(run.to_dict()))  # plain data, and read back the same
    assert Run.from_dict(data) == Run.from_dict(run.to_dict())
    assert Run.from_dict(data).flat_metrics()["answer hit@1"] == shown["hit@1"]


def test_a_run_records_where_it_came_from(index):
    """Packages, machine and seeds travel with the figures, so drift can be traced."""
    import numpy

    from glassrag import __version__

    run = evaluate(Pipeline(index), QUESTIONS[:1], golden_path="inline")
    made = Run.from_dict(json.loads(json.dumps(run.to_dict()))).provenance
    assert made["packages"]["numpy"] == numpy.__version__
    assert made["packages"]["glassrag"] == __version__
    assert made["seeds"] == {"lsa.seed": index.config.lsa.seed, "generate.seed": 0}
    assert made["machine"]["cpus"] >= 1 and made["code_version"] == run.code_version


def test_a_run_records_its_versions_time_index_and_settings(index):
    from glassrag import __version__
    from glassrag.provenance import code_version

    config = index.config.with_overrides(answer={"k": 3})
    run = evaluate(Pipeline(index, config), QUESTIONS[:1], index_path="idx")
    assert (run.glassrag_version, run.code_version) == (__version__, code_version())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", run.created)
    # the index as built (its own settings), the configuration as run
    assert run.index == {"path": "idx", "documents": 4, "chunks": len(index.chunks),
                         "settings": index.config.to_dict()}
    assert run.config == config.to_dict() and run.config["answer"]["k"] == run.k == 3
    assert isinstance(run.seconds, float) and run.seconds == round(run.seconds, 3)  # to the millisecond


def test_cut_when_no_chunk_holds_the_answer_whole(corpus: Path):
    config = Config().with_overrides(chunk={"chunker": "fixed", "size": 6, "overlap": 0},
                                     lsa={"dim": 4})
    index, _ = build_index([corpus], config)
    run = evaluate(Pipeline(index), QUESTIONS[:1])
    assert run.questions[0].cause == "cut"
    assert run.questions[0].intact is False


def trace(bm25_ranks, fuse_ranks, k=5, declined=False, gate=False):
    def hits(stage, relevant_rank):
        return tuple(Hit("rel" if r == relevant_rank else f"x{r}", 1.0 / r, r, stage)
                     for r in range(1, 31))
    stages = [StageTrace("bm25", "retrieve", {}, (), hits("bm25", bm25_ranks), 30, 0.0),
              StageTrace("fuse", "fuse", {}, ("bm25",), hits("fuse", fuse_ranks), 30, 0.0)]
    if gate:
        stages.append(StageTrace("gate", "gate", {}, ("fuse",), (), 30, 0.0))
    top = stages[1].hits[:k]
    shown = [Passage(h.chunk_id, "d", "t", "", "text", h.score, h.rank) for h in top]
    return Answer("q", None if declined else shown[0], () if declined else tuple(shown[1:]),
                  declined, "", tuple(stages))


JUDGED = Judgement({"a0": 1}, {"a0": "d"}, {"rel": ("a0",)}, {"a0": "x"}, True)


@pytest.mark.parametrize("bm25,fuse,declined,gate,visible,cause", [
    (1, 1, False, False, True, None),
    (1, 1, False, False, False, "shown but not visible"),
    (1, 7, False, False, True, "fused out"),
    (20, 20, False, False, True, "ranked too low"),
    (1, 1, True, True, True, "gated"),
    (20, 20, True, True, True, "ranked too low"),  # declined, but the ranking had lost it already
    (99, 99, False, False, True, "not retrieved"),
])
def test_loss_cause_is_the_first_stage_that_lost_it(bm25, fuse, declined, gate, visible, cause):
    assert loss_cause(JUDGED, True, trace(bm25, fuse, declined=declined, gate=gate), 5, visible) == cause


def test_every_question_mrr_matches_its_first_relevant_rank():
    from glassrag.demo import demo_docs, demo_golden
    from glassrag.evaluate.golden import load_golden

    index, _ = build_index([demo_docs()], Config())
    run = evaluate(Pipeline(index), load_golden(demo_golden(), "test"))
    for r in run.questions:
        if not r.answerable:
            continue
        rank = r.stages[run.ranking.stage].first_relevant_rank
        assert r.metric("ranking", "mrr@10") == pytest.approx(1 / rank if rank and rank <= 10 else 0.0), r.id


def test_compare_two_configurations(index):
    a = evaluate(Pipeline(index), QUESTIONS)
    b = evaluate(Pipeline(index, index.config.with_overrides(retrieve={"retrievers": ["bm25"]})),
                 QUESTIONS)
    result = compare_runs(a, b)
    rows = {r["metric"]: r for r in result["rows"]}
    assert rows["answer hit@1"]["test"] == "McNemar exact"
    assert rows["ranking mrr@10"]["test"] == "paired randomisation"
    assert all(0 <= r["p_holm"] <= 1 and r["p_holm"] >= r["p"] for r in result["rows"])
    assert result["questions"] == 4
    assert result["stages"] == {"a": {"ranking": "fuse", "answer": "answer"},
                                "b": {"ranking": "bm25", "answer": "answer"}}
    assert {"setting": "retrieve.retrievers", "a": ["bm25", "lsa"], "b": ["bm25"]} in result["settings"]


def test_compare_shows_a_dense_stages_own_figures(index):
    """vector_hit and mean top similarity of the LSA stage, question by question."""
    a = evaluate(Pipeline(index), QUESTIONS)
    sims = [r.stages["lsa"].top_score for r in a.questions]
    cutoff = (min(s for s in sims if s is not None) + max(s for s in sims if s is not None)) / 2
    b = evaluate(Pipeline(index, index.config.with_overrides(lsa={"cutoff": cutoff})), QUESTIONS)
    rows = {r["metric"]: r for r in compare_runs(a, b)["rows"]}
    assert rows["lsa mean_top_similarity"]["a"] == pytest.approx(sum(s or 0.0 for s in sims) / len(sims))
    assert rows["lsa mean_top_similarity"]["test"] == "paired randomisation"
    assert rows["lsa vector_hit"]["test"] == "McNemar exact"
    # a cutoff between the questions' best similarities leaves LSA with nothing on some
    hit = rows["lsa vector_hit"]
    assert hit["b"] < hit["a"] and hit["degraded"] == round((hit["a"] - hit["b"]) * len(QUESTIONS))
    assert hit["improved"] == 0


def with_declined(run, declined):
    """A new run with its answerable questions' declined outcomes replaced."""
    def changed(r: QuestionRecord) -> QuestionRecord:
        if not r.answerable:
            return r
        answer = {**r.metrics["answer"], "declined_answerable": float(declined[r.id])}
        return r.with_metrics({**r.metrics, "answer": answer})

    return replace(run, questions=tuple(changed(r) for r in run.questions))


def test_compare_knows_fewer_declined_answers_is_better(index):
    run = evaluate(Pipeline(index), QUESTIONS)
    a = with_declined(run, {"hit": True, "lost": True})
    b = with_declined(run, {"hit": False, "lost": True})
    row = next(r for r in compare_runs(a, b)["rows"] if r["metric"] == "answer declined_answerable")
    assert row["diff"] == -0.5 and row["direction"] == "DOWN" and row["better"] == "lower"
    assert row["verdict"] == "better" and row["improved"] == 1 and row["degraded"] == 0
    back = next(r for r in compare_runs(b, a)["rows"] if r["metric"] == "answer declined_answerable")
    assert back["verdict"] == "worse" and back["improved"] == 0 and back["degraded"] == 1


def test_compare_refuses_another_format(index):
    a = evaluate(Pipeline(index), QUESTIONS).to_dict()
    with pytest.raises(RunFileError, match="run format 1"):
        compare_runs(a, {**a, "format_version": 1}, "new.json", "old.json")
    with pytest.raises(RunFileError, match="not a glassrag run"):
        compare_runs(a, {"questions": []})


@pytest.mark.parametrize("damage, message", [
    (lambda d: [1, 2], "one JSON object, not list"),
    (lambda d: {**d, "questions": "x"}, "'questions' should be a list"),
    (lambda d: {**d, "questions": [{"id": 5}]}, "question record 1"),
    (lambda d: {**d, "answer": {"stage": "answer", "metrics": {"hit@5": 0.3}}}, "answer metric 'hit@5'"),
    (lambda d: {**d, "ranking": [1]}, "'ranking' should be"),
    (lambda d: {**d, "stages": {"bm25": [1]}}, "stage 'bm25'"),
    (lambda d: {**d, "k": "5"}, "'k' should be"),
    # a record's ranking row is read as (chunk, document, score): a row of another length is refused
    (lambda d: {**d, "questions": [{**d["questions"][0], "ranking": [["c", "d"]]}]},
     re.escape("run.questions[0].ranking[0] should be [chunk id, document id, score], not a list of 2")),
    (lambda d: {**d, "questions": [{**d["questions"][0], "ranking": [["c", "d", None]]}]},
     re.escape("run.questions[0].ranking[0][2] should be a number, not null")),
    # the web's fuzzer found these gave a 500 on /analytics (compare.py reads the ids)
    (lambda d: {**d, "gate": {**d["gate"], "offtopic": ["q1"]}}, "'gate.offtopic' should be"),
    (lambda d: {**d, "gate": {**d["gate"], "offtopic": {"asked": True}}}, "'gate.offtopic' should be"),
    (lambda d: {**d, "gate": {**d["gate"], "offtopic": {"asked": ["a"], "answered": [["a"]]}}},
     "'gate.offtopic' should be"),
])
def test_a_run_file_of_the_wrong_shape_is_refused_by_name(index, damage, message):
    data = evaluate(Pipeline(index), QUESTIONS).to_dict()
    with pytest.raises(RunFileError, match=message):
        Run.from_dict(damage(data), "runs/x.json")


def test_relevance_by_document_and_locator_without_text(index):
    q = Question("loc", "x", True, answers=(Span("manual", "§ 2.2 Power errors"),))
    j = Judge(index.chunks).judge(q)
    chunks = [index.chunk(c) for c in j.satisfies]
    assert [c.locator for c in chunks] == ["§ 2.2 Power errors"]


# The run's small helpers by hand (issue 13, docs/testing.md: mutation testing).

def test_interval_is_wilson_for_zero_one_outcomes_and_a_seeded_bootstrap_for_means():
    assert interval(metric_spec("hit@5"), []) == {"value": None, "low": None, "high": None, "n": 0}
    # Wilson at 1 of 2, z = 1.959964: (0.5 + z²/4 ± z·sqrt(0.125 + z²/16)) / (1 + z²/2)
    z2 = 1.959964 ** 2
    low = (0.5 + z2 / 4 - math.sqrt(z2) * math.sqrt(0.125 + z2 / 16)) / (1 + z2 / 2)
    high = (0.5 + z2 / 4 + math.sqrt(z2) * math.sqrt(0.125 + z2 / 16)) / (1 + z2 / 2)
    for name in ("hit@5", "top1", "answer_visible@5", "declined", "declined_answerable", "reader_accuracy",
                 "vector_hit", "failed"):
        got = interval(metric_spec(name), [1.0, 0.0])
        assert got == pytest.approx({"value": 0.5, "low": low, "high": high, "n": 2}, abs=1e-6), name
    # a mean of graded values: 2,000 resamples seeded with 0
    values = [1 / r for r in (1, 2, 3, 5, 8, 13, 21, 34)]
    got = interval(metric_spec("mrr@10"), values)
    assert got["value"] == pytest.approx(sum(values) / 8) and got["n"] == 8
    assert (got["low"], got["high"]) == mean_interval(values, resamples=2000, seed=0)
    assert (got["low"], got["high"]) != mean_interval(values, resamples=2000, seed=1)
    assert 0.0 <= got["low"] < sum(values) / 8 < got["high"] <= 1.0
    assert interval(metric_spec("mrr@10"), [1.0, 0.0])["low"] == 0.0  # a bootstrap, not Wilson's > 0
    for name in ("recall@5", "precision@5", "ndcg@10", "source_recall@5", "mean_top_similarity", "wording_share"):
        assert interval(metric_spec(name), [1.0, 0.0])["low"] == 0.0, name


def test_stage_metric_names_name_each_cutoff_once():
    def stage_metric_names(k: int) -> list[str]:
        return [s.name for s in stage_specs(k)]

    assert stage_metric_names(5) == ["hit@1", "hit@5", "recall@5", "precision@5", "mrr@10", "ndcg@10",
                                     "recall@100", "hit@10"]
    assert stage_metric_names(10) == ["hit@1", "hit@10", "recall@10", "precision@10", "mrr@10", "ndcg@10",
                                      "recall@100"]


def test_dense_figures_of_a_stage_that_returned_something_or_nothing():
    assert dense_figures(0.25) == {"vector_hit": 1.0, "mean_top_similarity": 0.25}
    assert dense_figures(0.0) == {"vector_hit": 1.0, "mean_top_similarity": 0.0}
    assert dense_figures(None) == {"vector_hit": 0.0, "mean_top_similarity": 0.0}


def test_the_ranking_stage_is_the_last_that_ranks():
    def record(kinds: dict[str, str]) -> QuestionRecord:
        return QuestionRecord.from_dict({"id": "q", "answerable": True,
                                         "stages": {name: {"kind": kind} for name, kind in kinds.items()}})

    gate_only = record({"gate": "gate"})
    ranked = record({"bm25": "retrieve", "lsa": "observe", "rerank": "rerank", "gate": "gate", "answer": "select"})
    assert ranking_stage([gate_only, ranked]) == "rerank"
    assert ranking_stage([gate_only]) == "answer" and ranking_stage([]) == "answer"
    # a run file may hold a kind this version does not know: not a ranking, and no crash
    assert ranking_stage([record({"bm25": "retrieve", "old": "some-older-kind"})]) == "bm25"


def test_a_run_file_is_written_whole_with_its_folder(tmp_path: Path, index):
    run = evaluate(Pipeline(index), [Question("é", "Qu'est-ce que E-4107 ?", False)])
    target = tmp_path / "runs" / "a.json"
    write_run_file(run, target)
    assert [p.name for p in target.parent.iterdir()] == ["a.json"]  # no temporary file left
    text = target.read_text(encoding="utf-8")
    assert '"id": "é"' in text and text.startswith('{\n "format"')  # as written: indent 1, not escaped
    assert Run.from_dict(json.loads(text)) == Run.from_dict(run.to_dict())


def test_a_run_holds_typed_records_and_its_file_reads_back_to_the_same_bytes(tmp_path: Path, index):
    run = evaluate(Pipeline(index), QUESTIONS)
    assert all(isinstance(r, QuestionRecord) for r in run.questions)
    target = tmp_path / "run.json"
    write_run_file(run, target)
    text = target.read_text(encoding="utf-8")
    back = Run.from_dict(json.loads(text))
    assert back.questions == run.questions
    assert json.dumps(back.to_dict(), ensure_ascii=False, indent=1) == text
    assert json.dumps(back.to_dict(deep=False), ensure_ascii=False, indent=1) == text


def test_a_records_plain_data_is_its_own_copy():
    record = QuestionRecord("q", "?", True, generation={"found": {"tags": []}}, metrics={"answer": {"hit@5": 1.0}})
    data = record.to_dict()
    data["generation"]["found"]["tags"].append("<b>")
    data["metrics"]["answer"]["hit@5"] = 0.0
    assert record.generation == {"found": {"tags": []}} and record.metric("answer", "hit@5") == 1.0


def test_a_refused_generation_is_only_counted_as_failed():
    refused = Generation("", "llama", "m", "[1]", (), (), None, None, 12.5, REFUSED)
    assert generation_record(None, refused, [], str.split) == {"text": "", "labels": "[1]", "ms": 12.5,
                                                               "failed": True}


REFUSED_Q = Question("stop", "the of", True, answers=QUESTIONS[0].answers)


def test_a_refused_question_is_a_declined_record_and_the_run_counts_each_population(index):
    calls = []
    started = time.perf_counter()
    run = evaluate(Pipeline(index), [*QUESTIONS, REFUSED_Q], progress=lambda n, total: calls.append((n, total)))
    took = time.perf_counter() - started
    # the five golden questions, then the bundled off-topic test half the gated pipeline runs too
    total = 5 + len(offtopic_questions("test"))
    assert calls == [(n, total) for n in range(1, total + 1)]
    assert 0.0 <= run.seconds <= took + 0.001  # the time of the run, not a clock reading
    assert run.golden == {"path": "", "split": "all", "questions": 5, "answerable": 3, "unanswerable": 2}
    assert run.index["path"] == ""
    stop = run.questions[-1]
    assert (stop.question, stop.declined, stop.cause, stop.stages, stop.ranking) == (
        "the of", True, "not retrieved", {}, ())
    assert stop.reason == ("query refused: nothing searchable is left of 'the of' after removing "
                           "stopwords (english list)")
    assert stop.metric("answer", "source_recall@5", None) == 0.0
    hit = run.questions[0]
    assert hit.metric("answer", "source_recall@5") == 1.0 == hit.metric("ranking", "source_recall@5")
    assert len(hit.stages["fuse"].top) == 5 < len(hit.ranking)  # the top k of a longer ranking
    shown = run.answer.metrics
    # declined: gym (unanswerable) and lost, stop (answerable); warranty (unanswerable) answered
    assert (shown["declined_unanswerable"]["value"], shown["declined_unanswerable"]["n"]) == (1 / 2, 2)
    assert (shown["declined_answerable"]["value"], shown["declined_answerable"]["n"]) == (2 / 3, 3)
    assert (shown["reader_declined_unanswerable"]["n"], shown["hit@1"]["n"]) == (2, 3)


def test_the_summary_names_and_which_of_them_are_zero_or_one(index):
    run = evaluate(Pipeline(index), [*QUESTIONS, REFUSED_Q])
    assert sorted(run.ranking.metrics) == ["answer_intact", "hit@1", "hit@10", "hit@5", "mrr@10", "ndcg@10",
                                           "precision@5", "rank1_buried@5", "recall@100", "recall@5",
                                           "source_recall@5"]
    assert sorted(run.answer.metrics) == [
        "answer_visible@5", "budget_recall", "declined_answerable", "declined_offtopic", "declined_unanswerable",
        "hit@1", "hit@5", "locator_hit@5", "mrr@5", "ndcg@5", "reader_accuracy", "reader_declined_unanswerable",
        "recall@5", "source_recall@5"]
    # the bundled off-topic questions' test half, beside the golden set's own
    assert run.answer.metrics["declined_offtopic"]["n"] == 148
    zero_one = [("answer", "declined_offtopic"), ("ranking", "answer_intact"), ("ranking", "hit@5"), ("answer", "answer_visible@5"),
                ("answer", "locator_hit@5"), ("answer", "declined_answerable"),
                ("answer", "declined_unanswerable"), ("answer", "reader_accuracy"), ("answer", "budget_recall"),
                ("answer", "reader_declined_unanswerable"), ("answer", "hit@1")]
    for section, name in zero_one:
        m = getattr(run, section).metrics[name]
        assert (m["low"], m["high"]) == wilson_interval(round(m["value"] * m["n"]), m["n"]), name
    graded = run.answer.metrics["mrr@5"]
    assert (graded["low"], graded["high"]) == (0.0, 1.0)  # a bootstrap of 0s and a 1, not Wilson's


def test_a_question_record_field_by_field(index):
    two = Question("two", "What does E-4107 mean?", True,
                   answers=(Span("manual", "", SENSOR), Span("notes", "", "quiet hours")))
    run = evaluate(Pipeline(index), [*QUESTIONS, two])
    hit, lost, gym, warranty, both = run.questions
    assert (hit.question, hit.split, hit.reason, hit.answer_docs) == (
        "What does E-4107 mean?", "test", "", ("manual",))
    assert (hit.in_budget, hit.reader_correct, hit.locator_hit, hit.visible) == (True, True, True, True)
    assert hit.quote["found"] and hit.quote["text"] == SENSOR and hit.quote["chunk_id"] == hit.ranking[0][0]
    # RRF, k = 60: first in both bm25 and lsa, 2 / 61, kept to 6 decimals
    assert hit.ranking[0][1:] == ("manual", round(2 / 61, 6))
    assert all(score == round(score, 6) for _, _, score in hit.ranking)
    signals = {"agreement", "bm25_norm", "coverage", "known_share", "term_share", "top:bm25", "top:lsa",
               "margin", "top:fuse", "rarest_held", "bm25_top"}
    assert set(hit.gate_signals) == signals
    assert all(st.ms >= 0 and len(st.top) <= 5 for st in hit.stages.values())
    assert [hit.stages[s].source_recall for s in ("bm25", "fuse")] == [1.0, 1.0]
    # manual is in the top 5, notes is not
    assert both.stages["fuse"].source_recall == 1 / 2 and both.answer_docs == ("manual", "notes")
    # a stage with nothing is kept when it retrieves, gates or selects
    assert set(lost.stages) == {"bm25", "lsa", "gate", "answer"} and lost.gate_signals == {}
    assert gym.stages["bm25"].source_recall == 0.0 and gym.answer_docs == ()
    # answered although unanswerable: the reader's quote is not correct, nothing relevant was packed
    assert warranty.quote["found"] and not warranty.reader_correct and not warranty.in_budget
    assert (warranty.locator_hit, warranty.visible, set(warranty.gate_signals)) == (None, False, signals)


def test_the_gate_summary_ranks_each_signal_by_auroc(index):
    run = evaluate(Pipeline(index), QUESTIONS)
    # found: hit (answerable, answer in the top k); unanswerable with signals: warranty (gym matched nothing)
    assert (run.gate["found"], run.gate["unanswerable"]) == (1, 1)
    assert set(run.gate["params"]) == {"score", "threshold", "rule", "cost", "separable", "auroc", "offtopic_threshold"}
    table = run.gate["signals"]
    assert [set(r) for r in table] == [{"signal", "auroc", "low", "high"}] * 11
    assert [r["auroc"] for r in table] == sorted((r["auroc"] for r in table), reverse=True)
    assert table[0]["auroc"] == 1.0 and table[-1]["auroc"] <= table[0]["auroc"]
    assert {r["signal"] for r in table} == set(run.questions[0].gate_signals)


def test_a_generated_answer_is_scored_against_what_it_was_given_and_the_question():
    given = ({"chunk_id": "c1", "doc_id": "manual", "title": "TX-200 Manual",
              "label": "TX-200 Manual, § 2.1 Sensor errors", "locators": ["§ 2.1 Sensor errors"], "text": SENSOR},)
    cited = Generation("E-4107 means the tilt sensor lost calibration [TX-200 Manual, § 2.1 Sensor errors].",
                       "llama", "m", "titled", given, (), 10, 5, 12.5, "stop")
    q = Question("q", "What does E-4107 mean?", True, answers=(Span("manual", "", SENSOR),), must_contain=("E-4107",))
    got = generation_record(q, cited, ["TX-200 Manual", "Travel policy"], str.split)
    assert {k: got[k] for k in ("failed", "text", "labels", "ms", "tokens")} == {
        "failed": False, "text": cited.text, "labels": "titled", "ms": 12.5, "tokens": [10, 5]}
    assert (got["cited"], got["foreign_citations"], got["refused_answerable"], got["contains_answer"]) == (
        1.0, 0.0, 0.0, 1.0)
    # without a golden question, the scores that need its labels are left out
    alone = generation_record(None, cited, ["TX-200 Manual"], str.split)
    assert "refused_answerable" not in alone and "contains_answer" not in alone and alone["cited"] == 1.0
    # a title that was not given is a foreign citation
    foreign = replace(cited, text="E-4107 means the tilt sensor lost calibration [Travel policy].")
    assert generation_record(q, foreign, ["TX-200 Manual", "Travel policy"], str.split)["foreign_citations"] == 1.0


def test_a_run_file_is_written_into_new_or_existing_nested_folders(tmp_path: Path, index):
    run = evaluate(Pipeline(index), QUESTIONS[:1])
    target = tmp_path / "runs" / "deep" / "a.json"
    write_run_file(run, target)
    write_run_file(run, target.with_name("b.json"))  # the folder exists now
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.json", "b.json"]


def test_the_figures_by_question_kind_and_the_readers_declines(index):
    run = evaluate(Pipeline(index), QUESTIONS)
    by_kind = run.by_kind
    assert list(by_kind) == ["identifier", "paraphrase", "unanswerable"]
    value_n = {kind: {m: (v["value"], v["n"]) for m, v in figures.items()} for kind, figures in by_kind.items()}
    # hit (identifier) found at rank 1; lost (paraphrase) matched nothing; gym declined, warranty answered
    assert value_n == {
        "identifier": {"ranking hit@5": (1.0, 1), "answer hit@5": (1.0, 1), "ranking mrr@10": (1.0, 1),
                       "declined": (0.0, 1)},
        "paraphrase": {"ranking hit@5": (0.0, 1), "answer hit@5": (0.0, 1), "ranking mrr@10": (0.0, 1),
                       "declined": (1.0, 1)},
        "unanswerable": {"ranking hit@5": (None, 0), "answer hit@5": (None, 0), "ranking mrr@10": (None, 0),
                         "declined": (1 / 2, 2)}}
    for name, hits in (("declined", 0), ("ranking hit@5", 1), ("answer hit@5", 1)):
        got = by_kind["identifier"][name]
        assert (got["low"], got["high"]) == wilson_interval(hits, 1), name
    # the reader found nothing for gym and quoted a sentence for warranty; nothing for a refused one
    assert run.answer.metrics["reader_declined_unanswerable"]["value"] == 1 / 2
    refused = Question("none", "the of", False, kind="unanswerable")
    more = evaluate(Pipeline(index), [*QUESTIONS, refused])
    assert more.answer.metrics["reader_declined_unanswerable"]["value"] == 2 / 3


def test_a_locator_hit_needs_the_labelled_document_and_its_locator(index):
    """A passage of the right document at another place is not a locator hit."""
    elsewhere = Question("elsewhere", "What does E-4107 mean?", True, answers=(Span("manual", "§ 9 Appendix"),))
    there = Question("there", "What does E-4107 mean?", True, answers=(Span("manual", "§ 2.1 Sensor errors"),))
    records = {r.id: r for r in evaluate(Pipeline(index), [elsewhere, there]).questions}
    assert records["elsewhere"].locator_hit is False and records["there"].locator_hit is True


def test_an_answer_no_stage_put_in_the_top_k_was_ranked_too_low(index):
    """k = 1: the retrievers and fusion have the power-errors chunk second, below another chunk
    of the manual; the cap of one chunk per document then drops it, but it was never in a top
    k to lose: ranked too low, not capped out."""
    q = Question("b", "error codes battery", True, answers=(Span("manual", "§ 2.2 Power errors"),))
    config = index.config.with_overrides(answer={"k": 1}, gate={"enabled": False}, cap={"per_document": 1})
    (record,) = evaluate(Pipeline(index, config), [q]).questions
    assert record.stages["bm25"].first_relevant_rank == record.stages["fuse"].first_relevant_rank == 2
    assert record.stages["cap"].first_relevant_rank is None
    assert record.cause == "ranked too low"
