"""What the train split gives the learned reranker, the gate and the reader (evaluate/tune.py),
on the four-file handbook with BM25 alone, so that every candidate list is read off the
chunks that hold a question's words (issue 13: mutation testing of evaluate/).

The handbook's chunks, in index order: manual 0 title, 1 Setup, 2 Error codes,
3 Sensor errors (E-4107), 4 Power errors (E-2210, battery); notes 5; scanner 6 title,
7 Errors (E-4170, mirror motor); travel 8 title, 9 Per diem, 10 Mileage. BM25's rankings:
- "What does E-4107 mean?": 3, 7, 4 (E-4107 in 3; "means" in all three)
- "scanner errors": 7, 2, 4, 3
- "sensor power errors": 3, 4, 2, 7
- "battery below ten percent": 4; "tripod rental price": 1
- "zebra giraffe", "password reset": nothing; "the of and": refused (stopwords only)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError, QueryError
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.remember import RememberingJudge
from glassrag.evaluate.tune import (_calibrate_reader, calibrate_index, gate_rows, grouped_reranker_rows,
                                    reranker_model, reranker_rows, train_reranker)
from glassrag.gate.calibrate import calibrate
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.query import Query
from glassrag.rerank.features import FEATURES, FeatureMaker
from glassrag.rerank.learned import train
from glassrag.rerank.learned_cv import cross_validate
from glassrag.schema.fitted import CALIBRATION_VERSION, RERANKER_VERSION
from glassrag.stage_cache import StageCache
from glassrag.store.base import Index

from tests.conftest import HANDBOOK, write_corpus

SENSOR = "§ 2.1 Sensor errors"


def Q(id: str, question: str, *answers: Span, split: str = "train", **kw) -> Question:
    return Question(id, question, bool(answers), split=split, answers=answers, **kw)


# train questions, in this order; (rows, labels) with the reranker's pool of 2 and
# (found?) with the answer's k = 2
TRAIN = [
    # chunk 3 at rank 1: rows 3, 7 labelled 1, 0; found
    Q("sensor", "What does E-4107 mean?",
      Span("manual", SENSOR, "E-4107 means the tilt sensor lost calibration")),
    Q("zebra", "zebra giraffe"),  # matches nothing: no rows, no signals
    Q("stop", "the of and", Span("manual", SENSOR)),  # refused by the pipeline
    # chunk 4, alone: row 4 labelled 1; found; the quote holds "battery"
    Q("battery", "battery below ten percent", Span("manual", "§ 2.2 Power errors"),
      must_contain=("battery",)),
    Q("tripod", "tripod rental price"),  # unanswerable that matches: row 1 labelled 0
    # chunk 2 at rank 2 of 7, 2, 4, 3: rows 7, 2 labelled 0, 1; found at k = 2 exactly
    Q("codes", "scanner errors", Span("manual", "§ 2. Error codes")),
    # chunk 4 at rank 3: rows 7, 2 labelled 0, 0; missed
    Q("power", "scanner errors", Span("manual", "§ 2.2 Power errors")),
    Q("password", "password reset", Span("notes")),  # answerable, matches nothing
]
# a test question the train split must leave out (it would add rows 7 labelled 1)
TEST = [Q("mirror", "mirror motor", Span("scanner", "§ 1. Errors"), split="test")]
QUESTIONS = [TRAIN[0], *TEST, *TRAIN[1:]]


def bm25_only(rerank: str = "none", pool: int = 2, **overrides) -> Config:
    """BM25 alone, the gate on the hand-written golden set only (no bundled off-topic
    questions, no answerability model: test_calibrate_with_offtopic has those)."""
    return Config().with_overrides(**{"retrieve": {"retrievers": ["bm25"]}, "answer": {"k": 2},
                                      "rerank": {"method": rerank, "pool": pool},
                                      "gate": {"cost": 3.0, "offtopic": False, "answerability": "none"},
                                      **overrides})


# rerank "learned" without a trained model: a pipeline that kept the reranker would refuse
# to start, so the reranker's rows must come from the stages before it
LEARNED = bm25_only("learned")


@pytest.fixture
def handbook(corpus: Path) -> Index:
    # its own settings ask for the untrained reranker: a pipeline must be given settings
    built, report = build_index([corpus], LEARNED)
    assert not report.failed and len(built.chunks) == 11
    return built


def row(index: Index, n: int) -> str:
    return index.chunks[n].id


# ---------------------------------------------------------------------- reranker_rows


def test_the_rows_are_each_train_question_s_top_pool_labelled_by_the_judge(handbook):
    calls = []
    x, y, n = reranker_rows(handbook, LEARNED, QUESTIONS, "hand.jsonl",
                            lambda done, total: calls.append((done, total)))
    # sensor 2 + battery 1 + tripod 1 + codes 2 + power 2 = min(pool, hits) summed
    assert x.shape == (2 + 1 + 1 + 2 + 2, len(FEATURES))
    assert y.tolist() == [1, 0, 1, 0, 0, 1, 0, 0]
    assert n == 8  # train questions, the refused and unmatched ones included
    assert calls == [(i, 8) for i in range(1, 9)]
    col = {name: x[:, i].tolist() for i, name in enumerate(FEATURES)}
    assert col["inv_rank"] == [1, 1 / 2, 1, 1, 1, 1 / 2, 1, 1 / 2]
    assert col["identifier"] == [1, 0, 0, 0, 0, 0, 0, 0]  # E-4107 is in chunk 3 only
    # the BM25 column holds the candidates' own scores, question by question
    plain = Pipeline(handbook, bm25_only())
    scores = [h.score for q in ("What does E-4107 mean?", "battery below ten percent",
                                "tripod rental price", "scanner errors", "scanner errors")
              for h in plain.run(q).stage("bm25").hits[:2]]
    assert col["bm25"] == pytest.approx(scores)
    assert col["bm25_ratio"] == pytest.approx([1, scores[1] / scores[0], 1, 1, 1, scores[5] / scores[4],
                                               1, scores[7] / scores[6]])


def test_the_pool_cuts_each_question_s_candidates(handbook):
    config = bm25_only("learned", pool=3)
    x, y, n = reranker_rows(handbook, config, TRAIN[:1] + TRAIN[5:7], "hand.jsonl")
    # 3, 7, 4 | 7, 2, 4 | 7, 2, 4
    assert y.tolist() == [1, 0, 0, 0, 1, 0, 0, 0, 1]
    assert x.shape == (9, len(FEATURES)) and n == 3


def test_rows_are_made_with_the_cache_given(handbook):
    cache = StageCache("hand")
    reranker_rows(handbook, LEARNED, TRAIN, "hand.jsonl", cache=cache)
    assert len(cache) > 0


def declining(index: Index) -> Index:
    """The index with a gate that declines every question (a threshold no score reaches),
    calibrated for the settings of the stages before the reranker."""
    gate, reader = calibrate_index(index, bm25_only(), TRAIN, "cost", "hand.jsonl")
    gate.update({"separable": True, "threshold": 1e9, "score": {"kind": "signal", "name": "top:bm25"}})
    return replace(index, extra={**index.extra, "gate": gate, "reader": reader})


@pytest.mark.parametrize("settings, gated", [({"mmr": {"relevance": 0.5}}, False),
                                             ({"cap": {"per_document": 1}}, False),
                                             ({}, True)])
def test_the_stages_after_the_ranking_are_not_run(handbook, settings, gated):
    """MMR, the cap and the gate change nothing the rows read, so they are switched off: the
    stage cache holds what the stages before the reranker leave, and a gate that would
    decline every question declines none."""
    plain = StageCache("hand")  # what the stages before the reranker leave, run directly
    before = Pipeline(handbook, bm25_only(gate={"enabled": False, "cost": 3.0}), plain)
    for q in TRAIN:
        if q.id != "stop":  # refused
            before.run(q.question)
    expected = reranker_rows(handbook, bm25_only(), TRAIN, "hand.jsonl")
    index = declining(handbook) if gated else handbook
    assert Pipeline(index, bm25_only()).run("battery below ten percent").declined is gated
    cache = StageCache("hand")
    x, y, n = reranker_rows(index, bm25_only("learned", **settings), TRAIN, "hand.jsonl", cache=cache)
    assert cache.counts()["stored"] == plain.counts()["stored"]
    assert (x.tolist(), y.tolist(), n) == (expected[0].tolist(), expected[1].tolist(), expected[2])


def test_no_train_question_is_an_error_that_names_the_golden_set(handbook):
    with pytest.raises(ConfigError) as info:
        reranker_rows(handbook, LEARNED, TEST, "hand.jsonl")
    assert info.value.problem == "hand.jsonl has no train questions"
    assert info.value.hint == "the reranker learns from the train split only"


@pytest.mark.parametrize("questions, relevant, candidates", [
    ([TRAIN[3]], 1, 1),  # battery: its one candidate is relevant
    ([TRAIN[4], TRAIN[6]], 0, 3),  # tripod and power: none is
    ([TRAIN[1], TRAIN[2]], 0, 0),  # no candidate at all
])
def test_one_label_class_is_an_error_that_counts_the_candidates(handbook, questions, relevant, candidates):
    with pytest.raises(ConfigError) as info:
        reranker_rows(handbook, LEARNED, questions, "hand.jsonl")
    assert info.value.problem == f"hand.jsonl: the train split gives {relevant} relevant of {candidates} candidates"
    assert info.value.hint == "the reranker needs both relevant and irrelevant candidates to learn from"


# ------------------------------------------------------------- reranker_model, train_reranker


def test_the_model_is_the_fit_of_the_rows_with_what_it_was_trained_on():
    x = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0], [4.0, 1.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    config = Config().with_overrides(rerank={"pool": 7})
    extra = {"pool": 7, "golden": "g.jsonl", "split": "train", "questions": 3}
    assert reranker_model(x, y, 3, config, "g.jsonl") == {**train(x, y, 1.0), **extra}
    made = reranker_model(x, y, 3, config, "g.jsonl", l2=0.25)
    assert made == {**train(x, y, 0.25), **extra} and made["l2"] == 0.25
    assert made["weights"] != train(x, y, 1.0)["weights"]


def test_train_reranker_fits_the_rows_of_the_train_split(handbook):
    calls, cache = [], StageCache("hand")
    model = train_reranker(handbook, LEARNED, QUESTIONS, "hand.jsonl",
                           lambda done, total: calls.append((done, total)), cache)
    x, y, n = reranker_rows(handbook, LEARNED, QUESTIONS, "hand.jsonl")
    x2, y2, _, groups = grouped_reranker_rows(handbook, LEARNED, QUESTIONS, "hand.jsonl")
    assert (x2 == x).all() and (y2 == y).all() and len(groups) == len(y)
    # with the cross-validation that auto decides by (rerank/learned_cv.py): too few questions here
    assert model == {**reranker_model(x, y, 8, LEARNED, "hand.jsonl"), "cv": cross_validate(x, y, groups),
                     "version": RERANKER_VERSION}  # a versioned record (schema/fitted.py)
    assert not model["cv"]["helps"] and "cross-validation needs at least 5" in model["cv"]["why"]
    assert (model["rows"], model["positives"], model["pool"], model["questions"]) == (8, 3, 2, 8)
    assert calls == [(i, 8) for i in range(1, 9)] and len(cache) > 0


def test_with_two_retrievers_the_rows_come_from_the_fused_ranking(handbook):
    # "sensor power errors": BM25 ranks 3, 4, 2, 7 and LSA 3, 4, 2 first too, then chunk 5
    # before 7. RRF: 3, 4, 2 first in both; 7 in both lists (1/64 + 1/(60 + r)) outranks 5, in
    # LSA's alone (1/64). The fused four are 3, 4, 2, 7; LSA's four hold no scanner chunk
    config = bm25_only("learned", pool=4, retrieve={"retrievers": ["bm25", "lsa"]}, fuse={"method": "rrf"})
    answer = Pipeline(handbook, bm25_only(pool=4, retrieve={"retrievers": ["bm25", "lsa"]},
                                          fuse={"method": "rrf"})).run("sensor power errors")
    assert [h.chunk_id for h in answer.stage("fuse").hits[:4]] == [row(handbook, n) for n in (3, 4, 2, 7)]
    assert row(handbook, 7) not in [h.chunk_id for h in answer.stage("lsa").hits[:4]]
    x, y, n = reranker_rows(handbook, config, [Q("scanner", "sensor power errors", Span("scanner", "§ 1. Errors"))],
                            "hand.jsonl")
    assert y.tolist() == [0, 0, 0, 1]


def test_a_superseded_document_s_rows_come_after_the_current_one_s(tmp_path):
    docs = write_corpus(tmp_path / "policy", {
        "old.md": "---\ntitle: Policy 2023\n---\n# Allowance\n\nThe daily allowance per day is EUR 40 per day.\n",
        "new.md": "---\ntitle: Policy 2025\nsupersedes: old\n---\n# Allowance\n\nThe allowance is EUR 45.\n"})
    index, _ = build_index([docs], LEARNED)
    question = Q("allowance", "daily allowance per day", Span("new"))
    answer = Pipeline(index, bm25_only()).run(question.question)
    assert [index.chunk(h.chunk_id).doc_id for h in answer.stage("bm25").hits] == ["old", "new"]
    # "versions" demotes the old policy below the current one: rows new, old labelled 1, 0
    x, y, n = reranker_rows(index, LEARNED, [question, Q("old", question.question, Span("old"))], "hand.jsonl")
    assert y.tolist() == [1, 0, 0, 1]


def test_the_rows_are_read_from_the_list_the_reranker_receives(tmp_path):
    """Issue 50.1: the rows were read from the last retrieve, fuse or versions stage, skipping
    the matter filter and window scoring that run just before the reranker, so it learned from
    chunks it never receives. With a pool of 3 here, window scoring (size 1) lifts the manual's
    chunk 3 into "scanner errors"'s top 3 (its neighbours 2 and 4 are in the list), and the
    filter drops the notes' References from "What does E-4107 mean?"'s. The lab's exhibit of the
    reranker (lab/rerank.py) reads the same list."""
    from glassrag.lab.base import LabBench
    from glassrag.lab.rerank import inputs

    refs = "# Field notes\n\n## References\n\nE-4107 tilt sensor calibration, TX-200 Manual (2025), pp. 12.\n"
    docs = write_corpus(tmp_path / "docs", {**HANDBOOK, "refs.md": refs})
    for settings, stage in (({"window": {"size": 1}}, "window"), ({"filter": {"matter": True}}, "matter")):
        index, _ = build_index([docs], bm25_only("learned", pool=3, **settings))
        before = Pipeline(index, bm25_only(pool=3, **settings))
        assert before.input_of("rerank") == stage
        features, expected, moved = FeatureMaker(index, before.bm25), [], False
        for q in TRAIN:
            try:
                answer = before.run(q.question)
            except QueryError:
                continue
            head = answer.stage(stage).hits[:3]
            moved |= [h.chunk_id for h in head] != [h.chunk_id for h in answer.stage("bm25").hits[:3]]
            if head:
                expected.append(features.matrix(Query(q.question, index.analyzer(q.question)), head))
        assert moved, f"{stage} changes no question's top 3 here: the test could not fail"
        x, _, _ = reranker_rows(index, index.config, TRAIN, "hand.jsonl")
        assert x.tolist() == np.vstack(expected).tolist()
        lab = inputs(LabBench("hand", index, tuple(TRAIN), "hand.jsonl"), "train")
        assert {name for *_, name in lab} == {stage}
        assert [[h.chunk_id for h in hits] for _, _, hits, _ in lab] == \
            [[h.chunk_id for h in before.run(q.question).stage(stage).hits] for q, *_ in lab]


def test_train_reranker_names_the_golden_set_in_its_errors(handbook):
    with pytest.raises(ConfigError) as info:
        train_reranker(handbook, LEARNED, TEST, "hand.jsonl")
    assert info.value.problem == "hand.jsonl has no train questions"


# ----------------------------------------------------------------------------- gate_rows


def signals_of(index: Index, config: Config, question: str) -> dict[str, float]:
    return next(t.params["signals"] for t in Pipeline(index, config).run(question).trace
                if t.kind == "gate")


def test_gate_rows_give_signals_and_whether_the_answer_is_in_the_top_k(handbook):
    calls = []
    pipeline = Pipeline(handbook, bm25_only())
    rows = list(gate_rows(pipeline, TRAIN, Judge(handbook.chunks),
                          lambda done, total: calls.append((done, total))))
    assert [q.id for q, *_ in rows] == [q.id for q in TRAIN]
    assert [(got is not None, found) for _, _, got, found in rows] == [
        (True, True), (False, False), (False, False), (True, True), (True, False), (True, True),
        (True, False), (False, False)]
    # the refused question has no answer; the unmatched ones an answer with no signals
    assert [answer is None for _, answer, _, _ in rows] == [False, False, True, False, False, False,
                                                            False, False]
    by_id = {q.id: got for q, _, got, _ in rows}
    assert by_id["sensor"] == signals_of(handbook, pipeline.config, "What does E-4107 mean?")
    assert by_id["tripod"]["top:bm25"] > 0
    assert calls == [(i, 8) for i in range(1, 9)]


def test_found_is_read_in_the_last_ranking_before_the_answer(handbook):
    # with one passage per document, "sensor power errors" ranks 3, 4, 2, 7 by BM25 and the
    # cap keeps 3, 7: chunk 7 is in the top 2 the gate reads, chunk 4 is not
    config = bm25_only(cap={"per_document": 1})
    pipeline = Pipeline(handbook, config)
    questions = [Q("scanner", "sensor power errors", Span("scanner", "§ 1. Errors")),
                 Q("power", "sensor power errors", Span("manual", "§ 2.2 Power errors"))]
    assert [found for *_, found in gate_rows(pipeline, questions, Judge(handbook.chunks))] == [True, False]


def test_an_unanswerable_question_is_never_found(handbook):
    pipeline = Pipeline(handbook, bm25_only())
    rows = list(gate_rows(pipeline, [Q("tripod", "tripod rental price")], Judge(handbook.chunks)))
    assert [(got is not None, found) for *_, got, found in rows] == [(True, False)]


# ------------------------------------------------------------------------ calibrate_index

# the reads, (answerable, coverage of the best quote, quote correct): sensor and battery are
# quoted whole ("E-4107 means the tilt sensor lost calibration.", "E-2210 means the battery
# is below ten percent."); tripod's quote "Mount the instrument on the tripod ..." holds one
# of its 3 terms; codes' and power's quote "Errors" one of 2, and neither is correct; the
# questions with no signals read nothing
READS = [(True, 1.0, True), (False, 0.0, False), (True, 0.0, False), (True, 1.0, True),
         (False, 1 / 3, False), (True, 0.5, False), (True, 0.5, False), (True, 0.0, False)]


def test_calibrate_index_counts_the_train_split_and_calibrates_gate_and_reader(handbook):
    calls, cache, judge = [], StageCache("hand"), RememberingJudge(handbook.chunks)
    gate, reader = calibrate_index(handbook, bm25_only(), QUESTIONS, "cost", "hand.jsonl",
                                   lambda done, total: calls.append((done, total)), cache=cache, judge=judge)
    assert gate["questions"] == {"found": 3, "missed": 1, "no_match_answerable": 2, "no_match_unanswerable": 1,
                                 "offtopic": 0, "no_match_offtopic": 0}
    assert (gate["golden"], gate["split"], gate["rule"], gate["cost"]) == ("hand.jsonl", "train", "cost", 3.0)
    assert (gate["n_answerable"], gate["n_unanswerable"]) == (3, 1)
    # the gate is fitted on the found answers' signals against the unanswerable ones'
    off = bm25_only(gate={"enabled": False, "cost": 3.0, "offtopic": False, "answerability": "none"})
    found = [signals_of(handbook, off, q) for q in ("What does E-4107 mean?", "battery below ten percent",
                                                    "scanner errors")]
    expected = calibrate(found, [signals_of(handbook, off, "tripod rental price")], "cost", 3.0,
                         "hand.jsonl (train split)", score="combined", combined=tuple(Config().gate.signals))
    # gate.score (combined, the default) was asked for; one unanswerable question cannot fit it
    assert expected["score_mode"] == "combined" and expected["how"].startswith("auto: the combination of")
    assert {k: v for k, v in gate.items() if k not in ("settings", "golden", "split", "questions", "version",
                                                        "unanswerable_by_topic", "weighted", "score_range",
                                                        "offtopic_gate", "on_topic_min", "combined_signals")} == expected
    assert gate["on_topic_min"] == 5  # the gate.on_topic_min it was made with (evaluate/fits.py compares it)
    assert gate["combined_signals"] == Config().gate.signals  # the gate.signals it read (evaluate/fits.py compares it)
    # no off-topic question (gate.offtopic false): the second threshold says why it is not set
    second = gate["offtopic_gate"]
    assert (second["keep"], second["threshold"], second["n_offtopic"]) == (0.98, None, 0) and second["why"]
    assert gate["version"] == CALIBRATION_VERSION  # a versioned record (schema/fitted.py)
    assert gate["weighted"] is False and list(gate["unanswerable_by_topic"]) == ["on-topic"]
    assert gate["settings"]["answer.k"] == 2 and gate["settings"]["rerank.used"] == "none"
    assert gate["settings"] == Pipeline(handbook, off).scoring_settings()
    # reader: thresholds 0, 1/3, 1/2, 1, 1.01 keep 2, 3, 4, 4, 2 of the 8 right
    assert reader == _calibrate_reader(READS)
    assert (reader["threshold"], reader["accuracy"], reader["questions"]) == (0.5, 4 / 8, 8)
    assert calls == [(i, 8) for i in range(1, 9)]
    assert len(cache) > 0
    # the judge given judged the answerable questions that matched, and those only
    assert set(judge._judged) == {"sensor", "battery", "codes", "power"}


def test_calibrate_index_takes_the_cost_given_over_the_configured_one(handbook):
    gate, _ = calibrate_index(handbook, bm25_only(), TRAIN, "cost", "hand.jsonl", cost=2.0)
    assert gate["cost"] == 2.0
    balanced, _ = calibrate_index(handbook, bm25_only(), TRAIN, "balanced", "hand.jsonl")
    assert balanced["rule"] == "balanced"


def test_the_gate_being_calibrated_does_not_decline(handbook):
    """The pass reads every question's signals and quote with the gate off, whatever the
    index's calibration would decline."""
    config = bm25_only()
    assert Pipeline(declining(handbook), config).run("battery below ten percent").declined
    assert calibrate_index(declining(handbook), config, TRAIN, "cost", "hand.jsonl") == \
        calibrate_index(handbook, config, TRAIN, "cost", "hand.jsonl")


def test_the_gate_s_errors_name_the_golden_set_and_split(handbook):
    with pytest.raises(ConfigError) as info:
        calibrate_index(handbook, bm25_only(), TRAIN[:4], "cost", "hand.jsonl")  # no unanswerable match
    assert info.value.problem.startswith("hand.jsonl (train split) has no unanswerable questions in this split")


def test_calibrate_index_reads_the_train_split_only(handbook):
    both = calibrate_index(handbook, bm25_only(), QUESTIONS, "cost", "hand.jsonl")
    assert both == calibrate_index(handbook, bm25_only(), TRAIN, "cost", "hand.jsonl")
    gate, reader = both
    # the matched unanswerable question is not in the counts: it is a row of the gate's fit
    assert (sum(gate["questions"].values()), gate["n_unanswerable"], reader["questions"]) == (7, 1, 8)


def test_calibrate_with_offtopic_weighs_each_kind_alike_and_reads_the_model(handbook):
    """gate.offtopic: the bundled off-topic train half joins the unanswerable questions, each
    kind weighing as much in total (with gate.on_topic_min = 0: one on-topic question is fewer
    than the default's 5, which fits the first threshold against the off-topic ones alone);
    the answerability model's signals are candidates."""
    config = bm25_only(gate={"cost": 3.0, "offtopic": True, "answerability": "bundled", "on_topic_min": 0})
    gate, _ = calibrate_index(handbook, config, QUESTIONS, "cost", "hand.jsonl")
    q = gate["questions"]
    assert q["offtopic"] == 185 and 0 <= q["no_match_offtopic"] <= 185  # the bundled train half
    matched = 185 - q["no_match_offtopic"]
    assert gate["unanswerable_by_topic"]["off-topic"]["questions"] == matched
    assert gate["unanswerable_by_topic"]["on-topic"]["questions"] == 1
    assert gate["weighted"] is True and gate["n_unanswerable"] == matched + 1
    assert {"answerability", "answerability_margin"} <= {r["signal"] for r in gate["signals"]}
    assert gate["settings"]["gate.answerability"] is not None
    # the second threshold reads the same off-topic questions (here too few found answers to fit it)
    second = gate["offtopic_gate"]
    assert (second["n_offtopic"], second["n_answerable"], second["keep"]) == (matched, gate["n_answerable"], 0.98)
