"""A sweep on the four-file handbook of tests/conftest.py with a hand-written golden set, whose
figures can be worked out by hand: which configurations run, in what order, which one wins and
why, what the sweep folder holds. Fast enough to run against every mutant of
evaluate/sweep.py (issue 13); tests/evaluate/test_sweep.py checks the same on the demo index."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError, GoldenError
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.grid import Grid, from_flags
from glassrag.evaluate.measure import Evaluated, check_metric
from glassrag.evaluate.sweep import _questions, choose, run_sweep, sweeps_folder, write_sweep
from glassrag.evaluate.tune import calibrate_index
from glassrag.evaluate.variant import fingerprint
from glassrag.evaluate.workbench import with_index_settings
from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore

from tests.conftest import HANDBOOK, comparable_run, write_corpus

MANUAL = "E-4107 means the tilt sensor lost calibration."
GOLDEN = [
    {"id": "t1", "question": "What does E-4107 mean?", "split": "train", "answerable": True,
     "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors", "text": MANUAL}]},
    # with b = 1 the short chunk "2. Error codes" outranks the answer (rank 2); with b = 0.4 it does not
    {"id": "t2", "question": "Which code reports a low battery?", "split": "train", "answerable": True,
     "answers": [{"doc": "manual", "locator": "§ 2.2 Power errors"}]},
    {"id": "t3", "question": "How are private cars reimbursed?", "split": "train", "answerable": True,
     "answers": [{"doc": "travel", "locator": "§ Mileage"}]},
    {"id": "t4", "question": "When does the fleet server update firmware?", "split": "train", "answerable": True,
     "answers": [{"doc": "notes"}]},
    {"id": "t5", "question": "What is the per diem for Tokyo?", "split": "train", "answerable": False},
    {"id": "t6", "question": "Which tripod fits the scanner?", "split": "train", "answerable": False},
    {"id": "t7", "question": "What is the warranty on drone propellers?", "split": "train", "answerable": False},
    {"id": "s1", "question": "How long must the scanner cool down?", "split": "test", "answerable": True,
     "answers": [{"doc": "scanner"}]},
    {"id": "s2", "question": "What is the daily allowance for meals abroad?", "split": "test", "answerable": True,
     "answers": [{"doc": "travel", "locator": "§ Per diem"}]},
    {"id": "s3", "question": "What does the cafeteria coffee cost?", "split": "test", "answerable": False},
]
# BM25 ranks, LSA observed, no reranker: none is trained; the gate on the hand-written golden
# set alone (no bundled off-topic questions, no answerability model), fast enough for mutmut
CONFIG = Config().with_overrides(lsa={"dim": 4}, gate={"offtopic": False, "answerability": "none"})


def write_golden(path: Path, rows: list[dict] = GOLDEN) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def handbook(tmp_path: Path) -> tuple[Path, Path]:
    """(index folder, golden file) of the handbook, built with CONFIG and no calibration."""
    index, _ = build_index([write_corpus(tmp_path / "docs")], CONFIG)
    EmbeddedStore(tmp_path / "idx").write(index)
    return tmp_path / "idx", write_golden(tmp_path / "golden.jsonl")


@pytest.fixture
def calibrated(handbook: tuple[Path, Path]) -> tuple[Path, Path]:
    """The same index with its gate and reader calibrated on train at the default cost 2.5, as `glassrag calibrate`."""
    folder, golden = handbook
    index = EmbeddedStore(folder).read()
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, CONFIG, load_golden(golden), "cost",
                                                                 str(golden))
    EmbeddedStore(folder).write(index)
    return folder, golden


def mrr(e: Evaluated) -> float:
    return e.metric("ranking mrr@10")["value"]


# run_sweep ---------------------------------------------------------------------------------

def test_every_configuration_runs_on_train_in_grid_order_and_the_best_alone_on_test(handbook):
    folder, golden = handbook
    calls = []
    sweep = run_sweep(folder, golden, from_flags(["bm25.b=1.0,0.4"]), name="b",
                      progress=lambda *a: calls.append(a))
    assert calls == [(0, 3, "001-b-1.0"), (1, 3, "002-b-0.4"), (2, 3, "test"), (3, 3, "done")]
    assert [(e.name, e.point, e.config.bm25.b) for e in sweep.configs] == [
        ("001-b-1.0", {"bm25.b": 1.0}, 1.0), ("002-b-0.4", {"bm25.b": 0.4}, 0.4)]
    # four answerable train questions; with b = 1 one answer is second: (1 + 1/2 + 1 + 1) / 4
    assert [mrr(e) for e in sweep.configs] == [(1 + 1 / 2 + 1 + 1) / 4, 1.0]
    assert [e.run.golden["split"] for e in sweep.configs] == ["train", "train"]
    assert [e.run.golden["questions"] for e in sweep.configs] == [7, 7]
    assert sweep.best is sweep.configs[1] and sweep.tied == []
    assert (sweep.name, sweep.split, sweep.metric, sweep.index_path, sweep.golden) == (
        "b", "train", "ranking mrr@10", str(folder), str(golden))
    # the test split, once, with the best configuration's settings
    assert sweep.test is not None
    assert sweep.test.golden["split"] == "test" and sweep.test.golden["questions"] == 3
    assert sweep.test.config["bm25"]["b"] == 0.4
    stored = EmbeddedStore(folder).read()
    assert [e.index for e in sweep.configs] == [fingerprint(stored.config)] * 2
    assert [e.gate for e in sweep.configs] == ["none", "none"]  # the index has no calibration
    assert [(v.path, v.built) for v in sweep.variants] == [(str(folder), False)]
    assert sweep.timing["indexes_seconds"] == 0.0 and sweep.timing["evaluation_seconds"] > 0
    assert sweep.uncached_seconds is None and sweep.seconds >= sweep.timing["evaluation_seconds"]


def test_the_metric_and_its_direction_choose(handbook):
    folder, golden = handbook
    # LSA alone (4 dimensions) puts the mileage answer below "Travel policy": BM25 wins on MRR
    sweep = run_sweep(folder, golden, from_flags(["retrieve.retrievers=lsa;bm25"]), test=False)
    assert mrr(sweep.configs[0]) < 1.0 == mrr(sweep.configs[1]) and sweep.best is sweep.configs[1]
    # lower is better for the share of answerable questions declined: every configuration
    # declines none of them (no calibration), so all tie and the first, unchanged one wins
    low = run_sweep(folder, golden, from_flags(["bm25.k1=0.9,1.5"]), metric="answer declined_answerable",
                    test=False)
    assert [e.metric("answer declined_answerable")["value"] for e in low.configs] == [0.0, 0.0]
    assert low.best.name == "002-k1-1.5" and low.tied == ["001-k1-0.9"]
    assert low.to_dict()["better"] == "lower"
    assert low.to_dict()["best"]["rule"].startswith("the lower answer declined_answerable on the train split")


def test_without_a_test_run_and_on_the_test_split(handbook):
    folder, golden = handbook
    calls = []
    sweep = run_sweep(folder, golden, from_flags(["bm25.k1=1.5"]), test=False, progress=lambda *a: calls.append(a))
    assert sweep.test is None and calls == [(0, 1, "001-k1-1.5"), (1, 1, "done")]
    on_test = run_sweep(folder, golden, from_flags(["bm25.k1=1.5"]))  # test=True, but the choice saw test
    assert on_test.test is not None
    on_test = run_sweep(folder, golden, from_flags(["bm25.k1=1.5"]), split="test")
    assert on_test.test is None and on_test.configs[0].run.golden["questions"] == 3
    assert on_test.to_dict()["test"] is None and on_test.split == "test"


def test_a_base_other_than_the_index_settings_is_where_every_configuration_starts(handbook):
    folder, golden = handbook
    base = CONFIG.with_overrides(answer={"k": 3})
    sweep = run_sweep(folder, golden, from_flags(["bm25.k1=0.9"]), base=base)
    assert sweep.configs[0].config.answer.k == 3 and sweep.test.k == 3
    assert "answer hit@3" in sweep.to_dict()["configs"][0]["metrics"]


def test_sweep_errors_name_the_problem(handbook, tmp_path):
    folder, golden = handbook
    with pytest.raises(ConfigError, match=r"has no questions in the test split") as err:
        run_sweep(folder, write_golden(tmp_path / "train.jsonl", GOLDEN[:7]), from_flags(["bm25.k1=1.5"]),
                  split="test")
    assert err.value.hint == "sweep another --split"
    with pytest.raises(ConfigError) as err:
        run_sweep(folder, golden, Grid(listed=(("plain", {}), ("gen", {"generate.enabled": True}))))
    assert (err.value.problem, err.value.hint) == ("the sweep does not generate answers",
                                                   "leave [generate] enabled off for a sweep")
    calls = []
    with pytest.raises(ConfigError, match="unknown metric 'ranking nope'") as err:
        run_sweep(folder, golden, from_flags(["bm25.k1=0.9,1.5"]), metric="ranking nope",
                  progress=lambda *a: calls.append(a))
    assert "ranking mrr@10" in err.value.hint
    assert calls == [(0, 3, "001-k1-0.9")]  # stopped after the first configuration


def test_an_index_time_setting_builds_an_index_once_and_a_later_sweep_reuses_it(handbook):
    folder, golden = handbook
    sweep = run_sweep(folder, golden, Grid(listed=(("small", {"chunk.size": 8}), ("same", {}))))
    small, same = sweep.configs
    fp = fingerprint(CONFIG.with_overrides(chunk={"size": 8}))
    assert small.index == fp and same.index == fingerprint(CONFIG)
    built = sweep.variants[1]
    assert (built.built, built.path) == (True, str(folder / "sweeps" / "indexes" / fp))
    assert len(built.index.chunks) > len(sweep.variants[0].index.chunks) == 11  # 8-word chunks cut sections
    assert small.run.index["chunks"] == len(built.index.chunks)
    described = sweep.to_dict()["indexes"]
    assert [d["settings"] for d in described] == [{}, {"chunk.size": 8}]
    assert sweep.timing["indexes_seconds"] > 0
    again = run_sweep(folder, golden, Grid(listed=(("small", {"chunk.size": 8}),)))
    assert [(v.path, v.built) for v in again.variants] == [(str(folder), False), (built.path, False)]
    # the best is evaluated on test on its own index
    best = run_sweep(folder, golden, Grid(listed=(("small", {"chunk.size": 8}),)))
    assert best.test.index["chunks"] == len(built.index.chunks)


def test_docs_replace_the_folders_the_index_was_read_from(handbook, tmp_path):
    folder, golden = handbook
    other = write_corpus(tmp_path / "other", {"manual.md": HANDBOOK["manual.md"]})
    sweep = run_sweep(folder, golden, Grid(listed=(("big", {"chunk.size": 400}),)), docs=[other], test=False)
    assert sorted(sweep.variants[1].index.documents) == ["manual"]


def test_index_time_settings_come_from_the_configuration_the_rest_from_the_index():
    stored = CONFIG.with_overrides(bm25={"k1": 0.9})
    config = CONFIG.with_overrides(chunk={"size": 50}, bm25={"k1": 2.0}, lsa={"dim": 6})
    got = with_index_settings(stored, config)
    assert (got.chunk.size, got.lsa.dim, got.bm25.k1) == (50, 6, 0.9)
    assert got.origin("chunk.size") == ("flag", "sweep") and got.origin("bm25.k1") == ("flag", "code")
    assert with_index_settings(stored, stored) == stored


def test_a_configuration_that_moves_the_gate_is_calibrated_on_train_and_kept(calibrated):
    folder, golden = calibrated
    sweep = run_sweep(folder, golden, from_flags(["gate.cost=2.5,5"]))
    # the index was calibrated at cost 2.5 with these settings: only cost 5 is calibrated again
    assert [e.gate for e in sweep.configs] == ["index", "train"]
    assert len(sweep.variants[0].calibrations) == 1
    assert sweep.timing["calibration_seconds"] > 0
    plain = run_sweep(folder, golden, from_flags(["gate.cost=2.5,5"]), calibrate=False)
    assert [e.gate for e in plain.configs] == ["index", "index"]


def test_cached_and_uncached_sweeps_give_the_same_runs_and_the_uncached_time(calibrated):
    folder, golden = calibrated
    grid = from_flags(["bm25.b=1.0,0.4", "gate.cost=2,5"])
    calls = []
    cached = run_sweep(folder, golden, grid, measure_uncached=True, progress=lambda *a: calls.append(a))
    plain = run_sweep(folder, golden, grid, caching=False)
    assert cached.cache_counts()["hits"] > 0
    assert plain.cache_counts() == {"hits": 0, "misses": 0, "stored": 0}
    for a, b in zip(cached.configs, plain.configs):
        assert comparable_run(a.run) == comparable_run(b.run), a.name
    assert cached.uncached_seconds > 0
    assert [c[2] for c in calls[-4:]] == [f"uncached {e.name}" for e in cached.configs]
    assert [c[:2] for c in calls[-4:]] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    timing = cached.to_dict()["timing"]
    assert timing["uncached_seconds"] == round(cached.uncached_seconds, 3)
    assert timing["speedup"] == round(cached.uncached_seconds / cached.seconds, 2)
    assert timing["cache"] == cached.cache_counts()


# the sweep as data and as a folder ---------------------------------------------------------

def test_sweep_json_holds_each_configuration_the_choice_and_the_test(handbook):
    folder, golden = handbook
    sweep = run_sweep(folder, golden, from_flags(["bm25.b=1.0,0.4"]), name="b")
    data = sweep.to_dict()
    assert (data["format"], data["format_version"], data["name"], data["index"], data["golden"]) == (
        "glassrag-sweep", 1, "b", str(folder), str(golden))
    assert (data["split"], data["metric"], data["better"], data["size"]) == ("train", "ranking mrr@10", "higher", 2)
    assert data["grid"] == {"axes": [{"setting": "bm25.b", "values": [1.0, 0.4]}], "configs": []}
    assert data["starting_settings"] == {"bm25.b": 0.4}
    first = data["configs"][0]
    assert (first["name"], first["settings"], first["run"], first["gate"]) == (
        "001-b-1.0", {"bm25.b": 1.0}, "runs/001-b-1.0.json", "none")
    assert first["index"] == fingerprint(CONFIG) and first["seconds"] == round(sweep.configs[0].seconds, 3)
    assert first["metric"] == sweep.configs[0].metric("ranking mrr@10")
    assert list(first["metrics"]) == ["ranking mrr@10", "answer hit@5", "ranking hit@5", "ranking ndcg@10",
                                      "answer declined_unanswerable"]
    assert first["metrics"]["answer hit@5"] == sweep.configs[0].run.flat_metrics()["answer hit@5"]
    assert data["best"] == {"name": "002-b-0.4", "settings": {"bm25.b": 0.4}, "metric": data["configs"][1]["metric"],
                            "tied_with": [],
                            "rule": "the higher ranking mrr@10 on the train split; a tie goes to the configuration "
                                    "that changes the fewest starting settings, then the least"}
    test = data["test"]
    assert (test["run"], test["config"], test["questions"]) == ("runs/best-test.json", "002-b-0.4", 3)
    assert test["metric"] == sweep.test.flat_metrics()["ranking mrr@10"]
    assert test["metrics"]["answer declined_unanswerable"] == sweep.test.flat_metrics()["answer declined_unanswerable"]
    assert test["note"] == ("evaluated once, for the configuration chosen on the train split; "
                            "no other configuration saw the test split")
    assert data["timing"]["seconds"] == round(sweep.seconds, 3)
    assert data["timing"]["speedup"] is None and data["timing"]["uncached_seconds"] is None
    for key in ("indexes_seconds", "calibration_seconds", "evaluation_seconds"):
        assert data["timing"][key] == round(sweep.timing[key], 3)
    assert data["provenance"]["seeds"] == {"lsa.seed": 0, "generate.seed": CONFIG.generate.seed}
    # every time to 3 decimals (the speed-up to 2), whatever the digits after
    sweep.seconds, sweep.uncached_seconds = 2.0004, 3.0107
    sweep.timing.update(indexes_seconds=0.12345, calibration_seconds=0.00049, evaluation_seconds=1.99951)
    sweep.configs[0].seconds = 0.98765
    again = sweep.to_dict()
    assert again["timing"] == {"seconds": 2.0, "indexes_seconds": 0.123, "calibration_seconds": 0.0,
                               "evaluation_seconds": 2.0, "uncached_seconds": 3.011, "speedup": 1.51,
                               "cache": sweep.cache_counts()}
    assert again["configs"][0]["seconds"] == 0.988


def test_write_sweep_writes_a_run_per_configuration_and_replaces_an_earlier_sweep_whole(handbook, tmp_path):
    folder, golden = handbook
    sweep = run_sweep(folder, golden, from_flags(["bm25.b=1.0,0.4"]), name="bé")
    target = tmp_path / "sweeps" / "b"
    (target / "runs").mkdir(parents=True)
    (target / "runs" / "stale.json").write_text("{}")
    (tmp_path / "sweeps" / ".b.tmp").mkdir()  # left by a crash
    (tmp_path / "sweeps" / ".b.tmp" / "half.json").write_text("{")
    (tmp_path / "sweeps" / ".b.old").mkdir()
    assert write_sweep(sweep, target) == target
    assert sorted(p.name for p in (target / "runs").iterdir()) == ["001-b-1.0.json", "002-b-0.4.json",
                                                                    "best-test.json"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["b"]
    text = (target / "sweep.json").read_text(encoding="utf-8")
    assert text.startswith('{\n "format": "glassrag-sweep",') and '"name": "bé"' in text
    run = (target / "runs" / "001-b-1.0.json").read_text(encoding="utf-8")
    assert "\n" not in run and '": ' not in run  # compact
    assert json.loads(run) == json.loads(json.dumps(sweep.configs[0].run.to_dict(deep=False)))
    assert json.loads((target / "runs" / "best-test.json").read_text()) == json.loads(
        json.dumps(sweep.test.to_dict(deep=False)))
    sweep.test = None
    write_sweep(sweep, target)
    assert sorted(p.name for p in (target / "runs").iterdir()) == ["001-b-1.0.json", "002-b-0.4.json"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["b"]


def test_sweeps_live_under_the_index():
    assert sweeps_folder("some/idx") == Path("some/idx/sweeps")


# the choice, by hand -------------------------------------------------------------------------

class Figures:
    """A run reduced to what the choice reads: its flat metrics."""

    def __init__(self, metrics: dict) -> None:
        self.metrics = metrics

    def flat_metrics(self) -> dict:
        return self.metrics


def evaluated(name: str, point: dict, value: float | None, metric: str = "ranking mrr@10") -> Evaluated:
    return Evaluated(name, point, CONFIG, Figures({metric: {"value": value, "n": 4}}), "fp", "none", 0.0)


def test_a_configuration_without_a_value_loses_and_values_equal_to_12_places_tie():
    none = evaluated("none", {}, None)
    some = evaluated("some", {"bm25.k1": 0.9}, 0.1)
    assert choose([none, some], "ranking mrr@10", CONFIG) == (some, [])
    # 0.1 + 0.2 is 0.30000000000000004: a tie with 0.3, which the unchanged configuration wins
    a = evaluated("a", {"bm25.k1": 0.9}, 0.1 + 0.2)
    b = evaluated("b", {"bm25.k1": 1.5}, 0.3)
    assert choose([a, b], "ranking mrr@10", CONFIG) == (b, ["a"])
    c = evaluated("c", {"bm25.k1": 0.9}, 0.3 + 1e-9)
    assert choose([c, b], "ranking mrr@10", CONFIG) == (c, [])


def test_equal_values_at_equal_distance_go_to_the_first_in_the_grid():
    a = evaluated("a", {"bm25.k1": 1.2}, 0.5)
    b = evaluated("b", {"bm25.k1": 1.8}, 0.5)  # |1.2 − 1.5| = |1.8 − 1.5|
    assert choose([a, b], "ranking mrr@10", CONFIG) == (a, ["b"])
    assert choose([b, a], "ranking mrr@10", CONFIG) == (b, ["a"])
    lower = [evaluated("x", {}, 0.2, "answer declined_answerable"),
             evaluated("y", {}, 0.1, "answer declined_answerable")]
    assert choose(lower, "answer declined_answerable", CONFIG) == (lower[1], [])


def test_a_metric_a_run_lacks_is_an_error_listing_the_ones_it_has():
    run = Figures({"ranking mrr@10": {"value": 1.0}, "answer hit@5": {"value": 0.5}})
    check_metric(run, "answer hit@5")
    with pytest.raises(ConfigError) as err:
        check_metric(run, "answer hit@3")
    assert str(err.value).startswith("unknown metric 'answer hit@3'")
    assert err.value.hint == "choose one of: ranking mrr@10, answer hit@5"


def test_a_configuration_reads_a_copy_of_its_metric_and_none_for_a_missing_one():
    e = evaluated("a", {}, 0.5)
    got = e.metric("ranking mrr@10")
    got["value"] = 9
    assert e.metric("ranking mrr@10") == {"value": 0.5, "n": 4}
    assert e.metric("answer hit@5") == {"value": None}


def test_a_beir_folder_gives_its_split_s_questions(tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "tilt sensor"}\n{"_id": "2", "text": "battery"}\n')
    (beir / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n1\tmanual\t1\n")
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n2\tmanual\t1\n")
    assert [(q.id, q.split) for q in _questions(beir, "train", False, None)] == [("1", "train")]
    # a choice on test, or a test run, reads the test split too, and the train split always
    assert [(q.id, q.split) for q in _questions(beir, "test", False, None)] == [("1", "train"), ("2", "test")]
    assert [q.id for q in _questions(beir, "train", True, None)] == ["1", "2"]
    assert [q.id for q in _questions(beir, "all", False, None)] == ["1", "2"]


# what the survivors of the first mutation run showed untested --------------------------------

def test_the_parts_of_the_time_add_up_to_the_whole(handbook):
    folder, golden = handbook
    t0 = time.perf_counter()
    sweep = run_sweep(folder, golden, Grid(listed=(("big", {"chunk.size": 400}), ("small", {"chunk.size": 8}),
                                                   ("plain", {}))), test=False, measure_uncached=True)
    wall = time.perf_counter() - t0
    assert sweep.name == ""
    # every configuration's seconds are its calibration and its evaluation; the index builds
    # are outside them, each inside the sweep's own indexes_seconds
    parts = sweep.timing
    assert sum(e.seconds for e in sweep.configs) == pytest.approx(
        parts["calibration_seconds"] + parts["evaluation_seconds"], abs=1e-9)
    assert parts["indexes_seconds"] >= sum(v.seconds for v in sweep.variants if v.built) > 0
    assert [v.built for v in sweep.variants] == [False, True, True]
    assert parts["indexes_seconds"] + parts["calibration_seconds"] + parts["evaluation_seconds"] <= sweep.seconds
    assert sweep.seconds + sweep.uncached_seconds <= wall
    # every variant's own cache counts, summed
    counts = [v.cache.counts() for v in sweep.variants]
    assert sweep.cache_counts() == {k: sum(c[k] for c in counts) for k in ("hits", "misses", "stored")}
    assert all(c["misses"] > 0 for c in counts)


def test_the_evaluations_share_the_stage_cache_and_name_their_golden_file_and_index(handbook):
    folder, golden = handbook
    # no gate to calibrate: every cache hit comes from the evaluations (the k1 change reruns
    # BM25 and what follows, never the analysis or LSA)
    sweep = run_sweep(folder, golden, from_flags(["bm25.k1=0.9,1.5"]))
    assert sweep.cache_counts()["hits"] > 0
    for run in [e.run for e in sweep.configs] + [sweep.test]:
        assert run.golden["path"] == str(golden) and run.index["path"] == str(folder)


def test_the_test_run_uses_the_gate_calibrated_for_the_best_configuration(calibrated):
    folder, golden = calibrated
    sweep = run_sweep(folder, golden, Grid(listed=(("cost2", {"gate.cost": 2.0}),)))
    assert sweep.configs[0].gate == "train"
    assert sweep.configs[0].run.gate["params"]["cost"] == 2.0 and sweep.test.gate["params"]["cost"] == 2.0


def test_a_choice_on_the_test_split_still_calibrates_on_train(calibrated):
    folder, golden = calibrated
    sweep = run_sweep(folder, golden, Grid(listed=(("cost2", {"gate.cost": 2.0}),)), split="test")
    (made,) = sweep.variants[0].calibrations.values()
    gate = made.extra["gate"]
    # four answerable train questions found; t5 and t6 match words, t7 matches none
    assert (gate["split"], gate["golden"]) == ("train", str(golden))
    assert gate["questions"] == {"found": 4, "missed": 0, "no_match_answerable": 0, "no_match_unanswerable": 1,
                                 "offtopic": 0, "no_match_offtopic": 0}
    assert made.extra["reader"]["questions"] == 7


def test_an_index_built_by_the_sweep_is_calibrated_and_cached_like_the_swept_one(calibrated):
    folder, golden = calibrated
    sweep = run_sweep(folder, golden, Grid(listed=(("small", {"chunk.size": 8}),)), test=False)
    built = sweep.variants[1]
    assert built.cache is not None and built.cache.counts()["misses"] > 0
    assert built.index.extra["gate"]["golden"] == str(golden)
    assert built.index.extra["gate"]["questions"]["found"] + built.index.extra["gate"]["questions"]["missed"] == 4


def test_a_sweep_of_query_time_settings_needs_no_source_documents(handbook, tmp_path):
    folder, golden = handbook
    shutil.rmtree(tmp_path / "docs")
    sweep = run_sweep(folder, golden, from_flags(["bm25.k1=0.9,1.5"]), test=False)
    assert len(sweep.configs) == 2
    with pytest.raises(ConfigError, match="which is gone"):
        run_sweep(folder, golden, Grid(listed=(("small", {"chunk.size": 8}),)), test=False)


def test_golden_labels_are_checked_against_the_index(handbook, tmp_path):
    folder, _ = handbook
    bad = write_golden(tmp_path / "bad.jsonl", [*GOLDEN[:1], {**GOLDEN[1], "answers": [{"doc": "nope"}]}])
    with pytest.raises(GoldenError) as err:
        run_sweep(folder, bad, from_flags(["bm25.k1=1.5"]))
    assert "nope" in str(err.value)


def test_a_test_split_the_metric_cannot_measure_gives_no_test_value(handbook, tmp_path):
    folder, _ = handbook
    answerable_test = write_golden(tmp_path / "g.jsonl", GOLDEN[:9])  # s3, the unanswerable one, left out
    sweep = run_sweep(folder, answerable_test, from_flags(["bm25.k1=1.5"]), metric="answer declined_unanswerable")
    data = sweep.to_dict()
    # no calibration: the gate declines only t7, which matches no word (t5 and t6 do)
    assert data["configs"][0]["metric"]["value"] == 1 / 3
    # the test split has no unanswerable question: the figure is there, with no value
    assert data["test"]["metric"] == {"value": None, "low": None, "high": None, "n": 0}


def test_sweep_json_has_the_common_figures_whatever_the_metric_and_when_it_was_made(handbook):
    folder, golden = handbook
    data = run_sweep(folder, golden, from_flags(["bm25.k1=1.5"]), metric="ranking ndcg@10").to_dict()
    assert list(data["configs"][0]["metrics"]) == ["ranking ndcg@10", "answer hit@5", "ranking hit@5",
                                                   "ranking mrr@10", "answer declined_unanswerable"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}", data["created"])


def test_values_that_differ_beyond_12_places_tie():
    a = evaluated("a", {"bm25.k1": 0.9}, 0.3 + 4e-13)  # 0.3 at 12 places, not at 13
    b = evaluated("b", {"bm25.k1": 1.5}, 0.3)
    assert choose([a, b], "ranking mrr@10", CONFIG) == (b, ["a"])


def test_a_sweep_folder_is_made_with_its_parents_and_keeps_text_as_it_is(handbook, tmp_path):
    folder, _ = handbook
    golden = write_golden(tmp_path / "g.jsonl", [{**GOLDEN[0], "question": "What does E-4107 mean — é?"},
                                                  *GOLDEN[1:]])
    sweep = run_sweep(folder, golden, from_flags(["bm25.k1=1.5"]))
    target = write_sweep(sweep, tmp_path / "a" / "b" / "c")
    for name in ("001-k1-1.5.json", "best-test.json"):
        text = (target / "runs" / name).read_text(encoding="utf-8")
        assert "\n" not in text and '": ' not in text  # compact
    assert "— é" in (target / "runs" / "001-k1-1.5.json").read_text(encoding="utf-8")
