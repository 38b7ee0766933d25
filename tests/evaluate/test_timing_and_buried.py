"""Issue 47: `eval` reports how often fusion buried a retriever's first place
(`rank1_buried@k`, evaluate/summary.py) and what an evaluation or a calibration spent its
time on (evaluate/timing.py)."""

from __future__ import annotations

import pytest

from glassrag.evaluate.summary import buried, fused, section_measures, stage_metrics
from glassrag.evaluate.timing import described, stage_time
from glassrag.schema.records import QuestionRecord, StageRecord


def record(qid: str, answerable: bool = True, **ranks: tuple[str, int | None]) -> QuestionRecord:
    stages = {name: StageRecord(kind, first_relevant_rank=rank) for name, (kind, rank) in ranks.items()}
    return QuestionRecord(id=qid, question=qid, answerable=answerable, kind="", split="test", in_budget=False,
                          reader_correct=False, locator_hit=None, declined=False, reason=None, visible=None,
                          intact=True, answer_docs=(), cause=None, stages=stages, ranking=(), quote=None,
                          gate_signals={})


BURIED = record("q1", bm25=("retrieve", 1), minilm=("retrieve", 87), fuse=("fuse", 11))
AT_K = record("q2", bm25=("retrieve", 1), minilm=("retrieve", 40), fuse=("fuse", 5))
LOST = record("q3", bm25=("retrieve", 1), minilm=("retrieve", None), fuse=("fuse", None))
SECOND = record("q4", bm25=("retrieve", 2), minilm=("retrieve", 3), fuse=("fuse", 9))
ALONE = record("q5", bm25=("retrieve", 1), lsa=("observe", 50))
OBSERVED_FIRST = record("q6", bm25=("retrieve", 9), lsa=("observe", 1), minilm=("retrieve", 8), fuse=("fuse", 7))


@pytest.mark.parametrize("r, is_fused, is_buried", [
    (BURIED, True, True), (AT_K, True, False), (LOST, True, True), (SECOND, True, False),
    (ALONE, False, False), (OBSERVED_FIRST, True, False),
])
def test_a_first_place_buried_below_k_by_the_fusion(r, is_fused, is_buried):
    assert fused(r) is is_fused
    assert buried(r, 5) is is_buried


def test_the_ranking_section_counts_it_over_the_fused_answerable_questions():
    records = [BURIED, AT_K, LOST, SECOND, ALONE, OBSERVED_FIRST,
               record("u1", answerable=False, bm25=("retrieve", None), minilm=("retrieve", None),
                      fuse=("fuse", None))]
    stages = stage_metrics(records, {}, {}, 5)
    m = next(m for m in section_measures(records, stages, "fuse", 5, None) if m.name == "rank1_buried@5")
    assert m.section == "ranking" and m.summary["n"] == 5 and m.summary["value"] == pytest.approx(2 / 5)
    assert m.values == {0: 1.0, 1: 0.0, 2: 1.0, 3: 0.0, 5: 0.0}


def test_time_by_stage_sums_each_stage_and_names_the_costliest():
    ms = stage_time([("bm25", 2.0), ("gate", 50.0), ("bm25", 3.0), ("answer", 45.0)])
    assert ms == {"bm25": 5.0, "gate": 50.0, "answer": 45.0} and list(ms) == ["bm25", "gate", "answer"]
    assert described(ms) == "gate 50% (0.1 s), answer 45% (0.0 s), bm25 5% (0.0 s)"
    assert described(ms, shown=1) == "gate 50% (0.1 s), 2 more stage(s) 50%"
    assert described({}) == "no stage took measurable time"
