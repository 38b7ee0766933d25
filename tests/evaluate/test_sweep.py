"""The sweep: its grid parsing, its choice, its stage cache and the figures it gives, which
must equal an uncached evaluation of the same configuration."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from glassrag.cli import main
from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.grid import Grid, combined, distance, from_flags, from_toml, parse_set
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.sweep import choose, run_sweep, write_sweep
from glassrag.evaluate.tune import calibrate_index, train_reranker
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline
from glassrag.retrieve.lsa import LSARetriever
from glassrag.stage_cache import StageCache
from glassrag.store import EmbeddedStore

from tests.conftest import comparable_run


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo index as `glassrag demo` builds it: reranker trained, gate calibrated on train."""
    folder = tmp_path_factory.mktemp("sweep") / "demo"
    config = Config()
    index, _ = build_index([demo_docs()], config)
    questions = load_golden(demo_golden())
    index.extra["reranker"] = train_reranker(index, config, questions, str(demo_golden()))
    index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions, "cost",
                                                                 str(demo_golden()))
    EmbeddedStore(folder).write(index)
    return folder


# the grid --------------------------------------------------------------------------------

def test_set_flags_make_every_combination_in_order():
    grid = from_flags(["bm25.k1=0.6,0.9,1.2", "bm25.b=0.3,0.75"])
    points = grid.points()
    assert len(grid) == 3 * 2 == len(points)
    assert points[0] == ("001-k1-0.6_b-0.3", {"bm25.k1": 0.6, "bm25.b": 0.3})
    assert points[1][1] == {"bm25.k1": 0.6, "bm25.b": 0.75}  # the last axis varies fastest
    assert points[-1][1] == {"bm25.k1": 1.2, "bm25.b": 0.75}


@pytest.mark.parametrize("flag, says", [
    ("bm25.k=1", "unknown setting 'bm25.k'"),
    ("nosuch.k1=1", "unknown setting 'nosuch.k1'"),
    ("bm25.k1=0.6,-1", "bm25.k1 = -1.0 in --set bm25.k1=0.6,-1: must be a number from 0 to 100"),
    ("bm25.b=1.5", "must be a number from 0 to 1"),
    ("bm25.k1=0.6,,0.9", "an empty value in the list"),
    ("bm25.k1", "expected SECTION.NAME=VALUE"),
    ("bm25.k1=", "expected SECTION.NAME=VALUE"),
    ("bm25.k1=0.6,0.6", "lists 0.6 twice"),
    ("chunk.chunker=fixed,nope", "must be one of: fixed, sentence"),
])
def test_a_bad_set_is_an_error_naming_it(flag: str, says: str):
    with pytest.raises(ConfigError) as e:
        from_flags([flag])
    assert says in str(e.value)


def test_a_setting_swept_twice_and_an_empty_sweep_are_errors():
    with pytest.raises(ConfigError, match="swept twice"):
        from_flags(["bm25.k1=0.6", "bm25.k1=0.9"])
    with pytest.raises(ConfigError, match="nothing to sweep"):
        combined(Grid())


def test_list_settings_take_alternatives_separated_by_semicolons():
    assert parse_set("retrieve.retrievers=bm25;bm25,lsa") == ("retrieve.retrievers", (["bm25"], ["bm25", "lsa"]))


def test_a_toml_sweep_file_gives_a_grid_and_a_list(tmp_path: Path):
    path = tmp_path / "sweep.toml"
    path.write_text('[grid.bm25]\nk1 = [0.9, 1.5]\n\n[[configs]]\nname = "literature"\n'
                    'bm25 = { k1 = 0.9, b = 0.4 }\n', encoding="utf-8")
    grid = from_toml(path)
    assert [name for name, _ in grid.points()] == ["001-literature", "002-k1-0.9", "003-k1-1.5"]
    assert grid.points()[0][1] == {"bm25.k1": 0.9, "bm25.b": 0.4}
    path.write_text("[grid.bm25]\nk1 = [0.9, 200]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bm25.k1 = 200 in \[grid\] of .*: must be a number from 0 to 100"):
        from_toml(path)
    path.write_text("[grid.bm25]\nk1 = 0.9\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="must be a non-empty list"):
        from_toml(path)


def test_a_bad_set_on_the_command_line_exits_like_other_config_errors(tmp_path: Path, capsys):
    code = main(["sweep", "--index", str(tmp_path / "none"), "--golden", str(demo_golden()),
                 "--set", "bm25.k1=0.6,abc"])
    assert code == ConfigError.exit_code == 2
    assert 'bm25.k1 = "abc" in --set bm25.k1=0.6,abc' in capsys.readouterr().err


# the choice --------------------------------------------------------------------------------

def test_distance_counts_changed_settings_then_their_relative_size():
    base = Config()  # k1 1.5, b 0.4
    assert distance({"bm25.k1": 1.5, "bm25.b": 0.4}, base) == (0, 0.0)
    assert distance({"bm25.k1": 1.2}, base) == (1, pytest.approx(0.3 / 1.5))
    assert distance({"bm25.k1": 1.2, "bm25.b": 0.75}, base) == (2, pytest.approx(0.3 / 1.5 + 0.35 / 1.0))
    assert distance({"chunk.chunker": "fixed"}, base) == (1, 1.0)


def _evaluated(name: str, point: dict, value: float) -> SimpleNamespace:
    cell = {"value": value, "low": value, "high": value, "n": 10}
    run = SimpleNamespace(flat_metrics=lambda: {"ranking mrr@10": cell, "answer declined_answerable": cell})
    return SimpleNamespace(name=name, point=point, run=run, metric=lambda m: cell)


def test_a_tie_goes_to_the_configuration_nearest_the_starting_settings_whatever_the_order():
    far = _evaluated("far", {"bm25.k1": 0.6}, 0.7)
    near = _evaluated("near", {"bm25.k1": 1.2}, 0.7)
    worse = _evaluated("worse", {"bm25.k1": 1.5}, 0.6)
    for order in ([far, near, worse], [near, far, worse]):
        best, tied = choose(order, "ranking mrr@10", Config())
        assert best is near and tied == ["far"]
    # lower is better for declined_answerable: the smaller value wins
    best, _ = choose([worse, far], "answer declined_answerable", Config())
    assert best is worse
    with pytest.raises(ConfigError, match="unknown metric 'ranking nope'"):
        choose([far], "ranking nope", Config())


# the stage cache ---------------------------------------------------------------------------

@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_a_k1_change_reruns_bm25_but_not_lsa_and_a_gate_change_reruns_nothing_before_it(demo, monkeypatch):
    index = EmbeddedStore(demo).read()
    question = load_golden(demo_golden(), "train", index.documents)[0].question
    calls = []
    real = LSARetriever.apply
    monkeypatch.setattr(LSARetriever, "apply", lambda self, q, h: calls.append(1) or real(self, q, h))
    cache = StageCache("demo")
    first = Pipeline(index, index.config, cache).run(question)
    assert len(calls) == 1 and cache.hits == 0
    changed_k1 = Pipeline(index, index.config.with_overrides(bm25={"k1": 0.9}), cache).run(question)
    assert len(calls) == 1  # LSA was looked up, not run again
    assert first.stage("lsa").hits == changed_k1.stage("lsa").hits
    assert first.stage("bm25").params["k1"] == 1.5 and changed_k1.stage("bm25").params["k1"] == 0.9
    misses = cache.misses
    no_gate = Pipeline(index, index.config.with_overrides(gate={"enabled": False}), cache).run(question)
    # every stage before and after the gate reused; the one miss is the gate's own signals,
    # which without the gate do not read the answerability model its calibration reads
    assert cache.misses == misses + 1
    assert [t.name for t in no_gate.trace] == [t.name for t in first.trace]
    # the ranking the gate reads (auto leaves the demo's reranker out: its cross-validation shows no help)
    assert no_gate.stage("versions").hits == first.stage("versions").hits


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_cached_sweep_figures_equal_uncached_evaluations(demo, tmp_path):
    """Several grid points, one of them a re-ingest setting and one a gate setting: the cached
    sweep's run of each equals the uncached one, and the starting point equals plain eval."""
    grid = Grid(listed=(("start", {}), ("k1-b", {"bm25.k1": 0.9, "bm25.b": 0.75}),
                        ("cost", {"gate.cost": 2.0}), ("mmr", {"mmr.relevance": 0.7}),
                        ("size", {"chunk.size": 120})))
    cached = run_sweep(demo, demo_golden(), grid, test=False)
    uncached = run_sweep(demo, demo_golden(), grid, test=False, caching=False)
    assert cached.cache_counts()["hits"] > 0 and uncached.cache_counts()["hits"] == 0
    assert [e.gate for e in cached.configs] == ["index", "train", "train", "train", "index"]
    for a, b in zip(cached.configs, uncached.configs):
        assert comparable_run(a.run) == comparable_run(b.run), a.name
    index = EmbeddedStore(demo).read()
    plain = evaluate(Pipeline(index, index.config), load_golden(demo_golden(), "train", index.documents),
                     golden_path=str(demo_golden()), split="train", index_path=str(demo))
    assert comparable_run(cached.configs[0].run) == comparable_run(plain)
    sized = cached.configs[-1]
    assert sized.run.index["chunks"] != plain.index["chunks"]  # built with chunk.size 120
    assert sized.run.index["settings"]["chunk"]["size"] == 120
    built = [v for v in cached.variants if v.built]
    assert len(built) == 1 and Path(built[0].path).parent == demo / "sweeps" / "indexes"


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_a_sweep_folder_holds_a_run_per_configuration_the_choice_and_test_once(demo, tmp_path):
    grid = from_flags(["bm25.k1=0.9,1.5", "bm25.b=0.4,0.75"])
    sweep = run_sweep(demo, demo_golden(), grid, name="k1b", measure_uncached=True)
    target = write_sweep(sweep, tmp_path / "k1b")
    data = json.loads((target / "sweep.json").read_text(encoding="utf-8"))
    assert data["format"] == "glassrag-sweep" and data["size"] == 4 and data["metric"] == "ranking mrr@10"
    assert [c["name"] for c in data["configs"]] == ["001-k1-0.9_b-0.4", "002-k1-0.9_b-0.75",
                                                    "003-k1-1.5_b-0.4", "004-k1-1.5_b-0.75"]
    values = {c["name"]: c["metric"]["value"] for c in data["configs"]}
    assert data["best"]["metric"]["value"] == max(values.values())
    for c in data["configs"]:
        run = json.loads((target / c["run"]).read_text(encoding="utf-8"))
        assert run["golden"]["split"] == "train" and run["config"]["bm25"]["k1"] == c["settings"]["bm25.k1"]
    test = json.loads((target / "runs" / "best-test.json").read_text(encoding="utf-8"))
    assert test["golden"]["split"] == "test" and data["test"]["config"] == data["best"]["name"]
    # the best configuration's k1 and b; every other BM25 setting (RM3's) at its default
    assert test["config"]["bm25"] == {**Config().to_dict()["bm25"], "k1": data["best"]["settings"]["bm25.k1"],
                                      "b": data["best"]["settings"]["bm25.b"]}
    assert data["timing"]["uncached_seconds"] > 0 and data["timing"]["cache"]["hits"] > 0
    assert data["provenance"]["machine"]["cpus"] >= 1
    assert not list(tmp_path.glob(".k1b*"))  # no temporary folder left


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_a_choice_made_on_test_questions_gets_no_test_run_and_an_empty_split_is_an_error(demo, tmp_path):
    sweep = run_sweep(demo, demo_golden(), from_flags(["bm25.k1=1.5"]), split="test", calibrate=False)
    assert sweep.test is None and sweep.to_dict()["test"] is None
    empty = tmp_path / "golden.jsonl"
    empty.write_text("\n".join(line for line in demo_golden().read_text(encoding="utf-8").splitlines()
                               if '"split": "test"' in line) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="no questions in the train split"):
        run_sweep(demo, empty, from_flags(["bm25.k1=1.5"]))


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_glassrag_sweep_prints_the_table_the_choice_and_test_once(demo, tmp_path, capsys):
    out = tmp_path / "gate-cost"
    code = main(["sweep", "--index", str(demo), "--golden", str(demo_golden()), "--set", "gate.cost=2.5,5",
                 "--metric", "answer hit@5", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0
    assert "2 configurations on the train split of golden.jsonl, best first by answer hit@5" in printed
    assert "← best" in printed and "best on train: " in printed
    assert "test (evaluated once): answer hit@5" in printed and "stage outputs reused" in printed
    data = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert [c["settings"] for c in data["configs"]] == [{"gate.cost": 2.5}, {"gate.cost": 5.0}]
    assert [c["gate"] for c in data["configs"]] == ["index", "train"]  # the index was calibrated at cost 2.5
    assert data["timing"]["cache"]["hits"] > 0
