"""The core every measurement goes through (evaluate/workbench.py, evaluate/measure.py), on the
real demo index as `glassrag demo` builds it: a configuration is evaluated once however often
it is asked for, an index-time setting gets an index of its own, a calibration is reused where
it fits, and the experiment log's fitting gives the runs it gave before the core existed."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.fitting import EXPERIMENT, SWEEP
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.grid import from_flags
from glassrag.evaluate.measure import measure
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.evaluate.variant import fingerprint
from glassrag.evaluate.workbench import Workbench
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.stage_cache import StageCache
from glassrag.store import EmbeddedStore
from glassrag.store.base import Index

from tests.conftest import comparable_run

QUESTIONS = load_golden(demo_golden())
GOLDEN = str(demo_golden())


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Index:
    """The demo index as `glassrag demo` builds it: reranker trained, gate calibrated on train."""
    config = Config()
    index, _ = build_index([demo_docs()], config)
    index.extra["reranker"] = train_reranker(index, config, QUESTIONS, GOLDEN)
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, QUESTIONS, "cost", GOLDEN)
    folder = tmp_path_factory.mktemp("workbench") / "demo"
    EmbeddedStore(folder).write(index)
    return EmbeddedStore(folder).read()


def from_demo(demo: Index, folder: Path, **kwargs) -> Workbench:
    """A sweep's workbench over the demo index, building from the demo's documents."""
    return Workbench(QUESTIONS, GOLDEN, label="demo", base=demo, folder=folder,
                     build=lambda config: build_index([demo_docs()], config)[0], **kwargs)


def test_the_same_configuration_asked_for_twice_is_evaluated_once(demo, tmp_path):
    workbench = from_demo(demo, tmp_path)
    config = Config().with_overrides(bm25={"k1": 1.2})
    run = workbench.run(config, "test")
    spent, counts = workbench.spent(), workbench.variant(config).cache.counts()
    again = workbench.run(Config().with_overrides(bm25={"k1": 1.2}), "test")  # equal settings, another object
    assert again is run and workbench.spent() == spent
    assert workbench.variant(config).cache.counts() == counts  # no stage was even looked up
    assert workbench.run(config, "train") is not run  # another split is another evaluation
    assert run.golden["split"] == "test" and run.golden["questions"] == len(workbench.split("test"))
    assert (run.golden["path"], run.index["path"]) == (GOLDEN, "demo")


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_an_index_time_setting_builds_a_second_index_kept_by_its_fingerprint(demo, tmp_path):
    workbench = from_demo(demo, tmp_path, caching="all")
    evaluated = measure(workbench, Config(), from_flags(["chunk.size=200,120"]), "train", "ranking mrr@10")
    own, small = workbench.variants()
    fp = fingerprint(Config().with_overrides(chunk={"size": 120}))
    assert [e.index for e in evaluated] == [fingerprint(demo.config), fp]
    assert (own.index.chunks.table, own.built) == (demo.chunks, False)
    assert (small.built, small.path) == (True, str(tmp_path / fp)) and EmbeddedStore(tmp_path / fp).exists()
    assert len(small.index.chunks) > len(demo.chunks)
    # built like the base index: its reranker trained, its gate calibrated on train
    assert small.index.extra["gate"]["golden"] == GOLDEN and "reranker" in small.index.extra
    assert [e.gate for e in evaluated] == ["index", "index"]
    # a second workbench reads the kept index instead of building it
    later = from_demo(demo, tmp_path)
    assert later.variant(Config().with_overrides(chunk={"size": 120})).built is False


def test_a_calibration_that_fits_is_reused_and_one_made_here_is_kept_for_its_settings(demo, tmp_path):
    workbench = from_demo(demo, tmp_path, fitting=SWEEP)
    own = workbench.variant(Config())
    # the index's own calibration fits the defaults, and a setting the gate's scores do not read
    assert workbench.fitted(Config()) == (own.index, "index")
    assert workbench.fitted(Config().with_overrides(answer={"excerpt_chars": 300}))[1] == "index"
    assert own.calibrations == {}
    # k1 moves the scores the gate reads: calibrated on train, once for both configurations
    k1 = Config().with_overrides(bm25={"k1": 1.2})
    index, how = workbench.fitted(k1)
    assert how == "train" and index.extra["gate"]["settings"]["bm25.k1"] == 1.2
    assert workbench.fitted(k1.with_overrides(answer={"excerpt_chars": 300})) == (index, "train")
    assert len(own.calibrations) == 1


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_the_experiment_fitting_gives_the_runs_the_experiment_log_gave(demo, tmp_path):
    """Each configuration fitted for itself, as experiment/corpora.py's Bench fitted it before
    the core: a reranker trained (rerank auto), the gate calibrated, on a copy of a fresh index."""
    workbench = Workbench(QUESTIONS, "demo", label="demo", folder=tmp_path, fitting=EXPERIMENT,
                          build=lambda config: build_index([demo_docs()], config)[0])
    config = Config().with_overrides(cap={"per_document": 1})
    run = workbench.run(config, "test")

    index = copy.copy(EmbeddedStore(tmp_path / fingerprint(config)).read())
    index.extra = dict(index.extra)
    cache = StageCache("before")
    index.extra["reranker"] = train_reranker(index, config, QUESTIONS, "demo", cache=cache)
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, QUESTIONS, config.gate.rule,
                                                                 "demo", cache=cache)
    before = evaluate(Pipeline(index, config, cache), [q for q in QUESTIONS if q.split == "test"], "demo",
                      "test", "demo")
    assert comparable_run(run) == comparable_run(before)
    assert workbench.fitted(config)[1] == "train"


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_a_bounded_workbench_forgets_its_runs_when_full(demo, tmp_path):
    """The lab's workbench lives as long as the server: what it remembers is bounded (`keep`)."""
    workbench = from_demo(demo, tmp_path, keep=2)
    first = workbench.run(Config(), "test")
    assert workbench.run(Config(), "test") is first
    workbench.run(Config().with_overrides(bm25={"k1": 1.2}), "test")
    workbench.run(Config().with_overrides(bm25={"k1": 0.9}), "test")  # a third: the first is forgotten
    assert workbench.run(Config(), "test") is not first
    assert comparable_run(workbench.run(Config(), "test")) == comparable_run(first)
    unbounded = from_demo(demo, tmp_path)
    runs = [unbounded.run(Config().with_overrides(bm25={"k1": k1}), "test") for k1 in (1.5, 1.2, 0.9)]
    assert unbounded.run(Config(), "test") is runs[0]
