"""The versioned records of what is fitted on the train split (schema/fitted.py): the gate's
`Calibration` and the learned reranker's `RerankerModel`. A dict in the shape stored before the
records (no `version`) still reads; an index written with one still loads, its calibration is
still recognised as fitting, and a run on it is the same run; a later version or a broken
record says what to do."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import StoreError
from glassrag.evaluate.fits import calibration_record, mismatch
from glassrag.evaluate.golden import Question
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.tune import calibrate_index
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.schema.fitted import (CALIBRATION_VERSION, RERANKER_VERSION, Calibration, RerankerModel,
                                    read_extra)
from glassrag.store import EmbeddedStore
from tests.conftest import HANDBOOK_QUESTIONS

CONFIG = Config().with_overrides(retrieve={"retrievers": ["bm25"]}, answer={"k": 2},
                                 rerank={"method": "none"}, gate={"offtopic": False})
QUESTIONS = [*HANDBOOK_QUESTIONS, Question("gym", "gym membership price", False)]

# the shapes stored before the records, as `glassrag calibrate` and `rerank-train` wrote them
OLD_GATE = {"score": {"kind": "signal", "name": "bm25_top"}, "threshold": 3.25, "rule": "cost", "cost": 5.0,
            "score_mode": "combined", "how": "combined", "separable": True, "why": "",
            "auroc": {"auroc": 0.9, "low": 0.8, "high": 1.0}, "sweep": [{"threshold": 3.25, "cost": 0.2}],
            "settings": {"bm25.k1": 1.5, "rerank.used": "none"}, "golden": "hand.jsonl", "split": "train",
            "questions": {"found": 5}, "weighted": False}
OLD_RERANKER = {"features": ["bm25", "coverage"], "mean": [8.5, 0.4], "std": [4.5, 0.2], "weights": [0.5, -0.25],
                "bias": -4.5, "l2": 1.0, "rows": 100, "positives": 9, "pool": 20, "golden": "hand.jsonl",
                "split": "train", "questions": 12, "cv": {"helps": False, "improved": 1, "degraded": 2}}


@pytest.mark.parametrize("record, old", [(Calibration, OLD_GATE), (RerankerModel, OLD_RERANKER)])
def test_an_old_dict_reads_as_version_1_and_comes_back_whole_with_its_version(record, old):
    read = record.from_dict(old)
    assert read.version == 1
    current = read.to_dict()
    assert current == {**old, "version": CALIBRATION_VERSION if record is Calibration else RERANKER_VERSION}
    assert record.from_dict(current) == replace(read, version=current["version"])


def test_the_fields_readers_decide_by_are_named():
    cal = Calibration.from_dict(OLD_GATE)
    assert (cal.rule, cal.threshold, cal.cost, cal.score_mode, cal.separable) == ("cost", 3.25, 5.0, "combined", True)
    assert cal.settings == OLD_GATE["settings"] and cal.fit["sweep"] == OLD_GATE["sweep"]
    # a calibration stored before gate.score was recorded chose by auto
    assert Calibration.from_dict({k: v for k, v in OLD_GATE.items() if k != "score_mode"}).score_mode == "auto"
    model = RerankerModel.from_dict(OLD_RERANKER)
    assert (model.features, model.weights, model.bias, model.cv["helps"]) == (("bm25", "coverage"), (0.5, -0.25),
                                                                              -4.5, False)


def test_a_later_version_or_a_broken_record_says_what_to_do():
    with pytest.raises(StoreError, match="version 3") as later:
        Calibration.from_dict({**OLD_GATE, "version": CALIBRATION_VERSION + 1})
    assert "upgrade glassrag" in later.value.hint
    with pytest.raises(StoreError, match="has no rule"):
        Calibration.from_dict({"threshold": 1.0})
    with pytest.raises(StoreError, match="has no weights"):
        RerankerModel.from_dict({k: v for k, v in OLD_RERANKER.items() if k != "weights"})
    with pytest.raises(StoreError, match="2 features but 1 weights"):
        RerankerModel.from_dict({**OLD_RERANKER, "weights": [0.5]})


def test_read_extra_leaves_the_rest_and_an_empty_record_as_they_are():
    extra = {"quality": {"a": {"verdict": "ok"}}, "reader": {"threshold": 0.25}, "gate": {}}
    assert read_extra(extra) == extra
    assert read_extra({"gate": OLD_GATE})["gate"]["version"] == CALIBRATION_VERSION


def test_an_index_written_before_the_records_loads_and_its_calibration_still_fits(corpus: Path, tmp_path: Path):
    index, _ = build_index([corpus], CONFIG)
    gate, reader = calibrate_index(index, CONFIG, QUESTIONS, CONFIG.gate.rule, "hand.jsonl")
    calibrated = replace(index, extra={**index.extra, "gate": gate, "reader": reader})
    store = EmbeddedStore(tmp_path / "index")
    store.write(calibrated)
    # make the stored manifest what glassrag wrote before the records: no version anywhere
    manifest = next((tmp_path / "index").glob("gen-*/manifest.json"))
    data = json.loads(manifest.read_text(encoding="utf-8"))
    assert data["extra"]["gate"]["version"] == CALIBRATION_VERSION  # written as a record
    data["extra"]["gate"] = {k: v for k, v in data["extra"]["gate"].items() if k != "version"}
    manifest.write_text(json.dumps(data), encoding="utf-8")

    loaded = EmbeddedStore(tmp_path / "index").read()
    assert loaded.extra["gate"] == {**gate, "version": CALIBRATION_VERSION}
    assert mismatch(loaded, CONFIG) == []
    pipeline = Pipeline(loaded, CONFIG)
    assert pipeline.gate.stale == [] and calibration_record(pipeline)["status"] == "index"
    # the same run as on the index held in memory, apart from its times
    timing = {"created", "seconds", "ms"}

    def figures(run_index) -> dict:
        def strip(o):
            if isinstance(o, dict):
                return {k: strip(v) for k, v in o.items() if k not in timing}
            return [strip(v) for v in o] if isinstance(o, list) else o
        return strip(evaluate(Pipeline(run_index, CONFIG), QUESTIONS, "hand.jsonl", "all").to_dict())

    assert figures(loaded) == figures(calibrated)
