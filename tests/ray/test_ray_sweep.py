"""A sweep on the local 3-node Ray cluster (tests/ray/conftest.py) is the sequential sweep: the
same runs, choice, test run and sweep.json (the seconds aside), and the same stage-cache counts,
which only units that keep every point of one index together give. Ray absent or the cluster
unreachable: a clear error, nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.errors import ShardError
from glassrag.evaluate.grid import from_flags
from glassrag.evaluate.on_ray import SweepUnit, run_sweep_on_ray, sweep_units
from glassrag.evaluate.sweep import Sweep, run_sweep, write_sweep
from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore
from tests.conftest import comparable_run, write_corpus
from tests.evaluate.test_sweep_small import CONFIG, write_golden

# chunk.size needs a re-ingest (two indexes: two units), bm25.k1 does not (two points a unit,
# whose second reuses the first's analysis and LSA list)
GRID = ["chunk.size=12,40", "bm25.k1=0.9,1.5"]


@pytest.fixture
def handbook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(index, golden) of the four-file handbook, relative to the test's folder, its working one."""
    monkeypatch.chdir(tmp_path)
    index, _ = build_index([write_corpus(tmp_path / "docs")], CONFIG)
    EmbeddedStore(Path("idx")).write(index)
    return Path("idx"), write_golden(Path("golden.jsonl"))


def comparable(sweep: Sweep) -> dict:
    """sweep.json without what measures time."""
    data = json.loads(json.dumps(sweep.to_dict()))
    for key in ("created", "timing"):
        data.pop(key)
    for row in (*data["configs"], *data["indexes"]):
        row.pop("seconds")
    return data


def test_the_units_are_the_points_of_one_index_in_grid_order():
    grid = from_flags(GRID)
    assert [name for name, _ in grid.points()] == ["001-size-12_k1-0.9", "002-size-12_k1-1.5",
                                                   "003-size-40_k1-0.9", "004-size-40_k1-1.5"]
    assert sweep_units(CONFIG, grid) == [[0, 1], [2, 3]]
    assert sweep_units(CONFIG, from_flags(["bm25.k1=0.9,1.2,1.5"])) == [[0, 1, 2]]  # one index: one unit


def test_a_sweep_on_ray_is_the_sequential_sweep(cluster, handbook):
    index, golden = handbook
    grid = from_flags(GRID)
    one = run_sweep(index, golden, grid, name="g")
    write_sweep(one, Path("one"))
    shutil.rmtree(index / "sweeps")  # the cluster builds its indexes again, as the sequential run did
    calls = []
    many = run_sweep_on_ray(index, golden, grid, name="g", progress=lambda *a: calls.append(a))
    write_sweep(many, Path("many"))
    assert [e.name for e in many.configs] == [e.name for e in one.configs]
    for a, b in zip(one.configs, many.configs):
        assert comparable_run(a.run) == comparable_run(b.run), a.name
    assert (many.best.name, many.tied) == (one.best.name, one.tied)
    assert comparable_run(many.test) == comparable_run(one.test)
    assert comparable(many) == comparable(one)
    assert [i["built"] for i in many.indexes()] == [False, True, True]
    # the units kept each index's cache whole: every reuse of the sequential run happened
    assert many.cache_counts() == one.cache_counts() and one.cache_counts()["hits"] > 0
    assert sorted(os.listdir("many/runs")) == sorted(os.listdir("one/runs"))
    for name in os.listdir("one/runs"):
        a, b = (json.loads((Path(f) / "runs" / name).read_text()) for f in ("one", "many"))
        assert a["ranking"] == b["ranking"] and a["answer"] == b["answer"], name
    assert calls[-1] == (5, 5, "done") and calls[-2] == (4, 5, "test")


def test_split_units_would_lose_the_cache(handbook):
    """The guard: one point a unit (each on a fresh workbench) reuses less than one unit an
    index, so the equality of counts above can fail."""
    index, golden = handbook
    grid = from_flags(GRID)
    points = grid.points()
    kept = SweepUnit(os.getcwd(), str(index), str(golden), ["docs"], "train", False, True)
    hits_kept = kept.measure(points[:2], CONFIG)[1]["cache"]["hits"]
    alone = [SweepUnit(os.getcwd(), str(index), str(golden), ["docs"], "train", False, True).measure([p], CONFIG)
             for p in points[:2]]
    assert sum(state["cache"]["hits"] for _, state in alone) < hits_kept


def test_the_cli_sweeps_on_ray_and_writes_what_the_sequential_cli_writes(cluster, handbook, capsys):
    index, golden = handbook
    flags = ["sweep", "--index", str(index), "--golden", str(golden), "--name", "c", "--docs", "docs",
             *(x for s in GRID for x in ("--set", s))]
    assert main([*flags, "--out", "one"]) == 0
    shown = capsys.readouterr().out
    shutil.rmtree(index / "sweeps")
    assert main([*flags, "--out", "many", "--ray"]) == 0
    again = capsys.readouterr().out

    def lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith(("best on", "test (evaluated once)", "index "))]

    assert lines(again) == lines(shown) and len(lines(shown)) == 4
    a, b = (json.loads(Path(f, "sweep.json").read_text()) for f in ("one", "many"))
    assert a["best"] == b["best"] and a["test"] == b["test"] and a["timing"]["cache"] == b["timing"]["cache"]
    assert main([*flags, "--out", "x", "--ray", "--measure-uncached"]) == 2
    assert "--measure-uncached" in capsys.readouterr().err and not Path("x").exists()


def test_an_unreachable_cluster_is_an_error_at_once(handbook):
    index, golden = handbook
    done = subprocess.run([sys.executable, "-m", "glassrag", "sweep", "--index", str(index), "--golden", str(golden),
                           "--set", "bm25.k1=0.9", "--out", "x", "--ray", "127.0.0.1:9"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "GLASSRAG_RAY": ""})
    assert done.returncode == 8, done.stderr
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in done.stderr and not Path("x").exists()


def test_without_ray_the_error_says_how_to_install_it(handbook, monkeypatch):
    index, golden = handbook
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as where it is not installed
    with pytest.raises(ShardError, match="a sweep with --ray needs Ray") as err:
        run_sweep_on_ray(index, golden, from_flags(["bm25.k1=0.9"]))
    assert "pip install 'glassrag[ray]'" in err.value.hint and "leave out --ray" in err.value.hint
