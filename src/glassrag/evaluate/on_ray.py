"""A sweep on a Ray cluster (`glassrag sweep --ray`): the grid cut into units that keep the
stage cache, each unit measured by one actor, the results merged into the sweep the sequential
run gives (evaluate/sweep.py `run_sweep`), configuration for configuration.

    unit(point) = fingerprint(configure(base, point))     (evaluate/variant.py)

A unit is the grid's points whose index is the same: the index-time settings (chunker, analyzer,
LSA, embedder) decide which index a configuration runs on, and each index has its own stage
cache (glassrag/stage_cache.py), so the points of one unit share every stage the sequential run
shares, and points of two units never shared one. A unit's actor reads the swept index, builds
its unit's index where it differs (kept under INDEX/sweeps/indexes/FINGERPRINT/ as before: a
cluster of several machines needs that folder on a file system they share) and measures its
points in grid order, as `measure` does. Units run side by side, one CPU each; a k1 × b grid
is one unit (one index), so only grids over index-time settings gain from a cluster.

The best configuration is chosen on the driver by the sequential rule (`choose`) over every
point in grid order; the test split is then run by the actor that measured the best, whose
fitted index and cache are still there: the actor holding the best so far is kept as units
finish and every other one is ended, so one idle actor at most holds a CPU (on a cluster of one
CPU none is kept, and a new actor fits the best again before testing it: the same run, its cache
lost). Runs, the choice, the test and the cache counts equal the sequential run's; only the
seconds differ (`timing` sums the units' seconds, `seconds` is the driver's wall clock).
Ray is imported only here, when a sweep is run with --ray.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError, GlassragError, ShardError
from glassrag.evaluate import DEFAULT_METRIC
from glassrag.evaluate.grid import Grid, Point, configure
from glassrag.evaluate.measure import Evaluated, check_metric, measured
from glassrag.evaluate.sweep import Progress, Sweep, _questions, choose, sweep_inputs, sweep_workbench
from glassrag.evaluate.variant import cache_counts, fingerprint
from glassrag.schema import Run

NEEDS = ("a sweep with --ray", "leave out --ray to sweep on this machine")


def sweep_units(base: Config, grid: Grid) -> list[list[int]]:
    """The positions of the grid's points (`Grid.points` order) grouped by the fingerprint of the
    index each runs on, the groups in the order of their first point."""
    units: dict[str, list[int]] = {}
    for i, (_, point) in enumerate(grid.points()):
        units.setdefault(fingerprint(configure(base, point)), []).append(i)
    return list(units.values())


class SweepUnit:
    """One unit on its node: a sweep's workbench (`sweep_workbench`, caching everything) and
    the points it measures. A plain class, so it is tested without Ray too; on the cluster it
    is a Ray actor."""

    def __init__(self, cwd: str, index_dir: str, golden: str, docs: Sequence[str], split: str, test: bool,
                 calibrate: bool) -> None:
        from glassrag.store import EmbeddedStore

        os.chdir(cwd)  # the driver's folder: paths given relative to it name the same files, as the runs record them
        stored = EmbeddedStore(index_dir).read()
        self.split = split
        self.workbench = sweep_workbench(stored, Path(index_dir), Path(golden), [Path(d) for d in docs], split,
                                         test, calibrate, caching=True)
        self.base = stored.config

    def measure(self, points: Sequence[tuple[str, Point]], base: Config) -> tuple[list[Evaluated], dict[str, Any]]:
        """Each point's configuration run on the sweep's split, in the order given (`measure`),
        and the unit's state after them."""
        evaluated = [measured(self.workbench, name, point, configure(base, point), self.split)
                     for name, point in points]
        return evaluated, self.state(base)

    def test(self, best: Evaluated, base: Config) -> tuple[Run, dict[str, Any]]:
        """The best configuration run on the test split, on this unit's fitted index and cache,
        and the unit's state after it."""
        return measured(self.workbench, "best-test", best.point, best.config, "test").run, self.state(base)

    def state(self, base: Config) -> dict[str, Any]:
        """What the sweep reports of this unit: its indexes (`Variant.describe` against `base`),
        its caches' counts and its seconds (Workbench.timing)."""
        variants = self.workbench.variants()
        return {"indexes": [v.describe(base) for v in variants], "cache": cache_counts(variants),
                "timing": dict(self.workbench.timing)}


def run_sweep_on_ray(index_dir: str | Path, golden: str | Path, grid: Grid, *, address: str | None = None,
                     split: str = "train", metric: str = DEFAULT_METRIC, base: Config | None = None,
                     docs: Sequence[Path] | None = None, test: bool = True, calibrate: bool = True,
                     name: str = "", progress: Progress | None = None) -> Sweep:
    """`run_sweep` with its units (`sweep_units`) measured side by side on the Ray cluster at
    `address` (else $GLASSRAG_RAY, else a one-machine cluster started here): the same sweep, its
    indexes described and its caches counted by the units (module docstring)."""
    from glassrag.shard.serve import connect

    started = time.perf_counter()
    index_dir, golden = Path(index_dir), Path(golden)
    stored, base, test, sources = sweep_inputs(index_dir, grid, split, base, docs, test)
    if not [q for q in _questions(golden, split, False, stored) if split == "all" or q.split == split]:
        raise ConfigError(f"{golden} has no questions in the {split} split", "sweep another --split")
    ray = connect(address, NEEDS)
    points, units = grid.points(), sweep_units(base, grid)
    total = len(points) + (1 if test else 0)
    args = (os.getcwd(), str(index_dir), str(golden), [str(d) for d in sources], split, test, calibrate)
    unit_actor = ray.remote(num_cpus=1, max_restarts=0)(SweepUnit).options(scheduling_strategy="SPREAD")
    actors = [unit_actor.remote(*args) for _ in units]
    keep = ray.cluster_resources().get("CPU", 0) >= 2  # the kept actor leaves a CPU to the others
    evaluated: dict[int, Evaluated] = {}  # grid position -> its configuration measured
    states: list[dict[str, Any]] = [{} for _ in units]
    try:
        pending = {a.measure.remote([points[i] for i in unit], base): u
                   for u, (a, unit) in enumerate(zip(actors, units))}
        leader = 0
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            u = pending.pop(ready[0])
            got, states[u] = result_of(ray, ready[0], f"unit {u + 1} ({points[units[u][0]][0]}, …)")
            evaluated.update(zip(units[u], got))
            if progress:
                progress(len(evaluated), total, f"{len(evaluated)} of {len(points)} configurations")
            so_far = [evaluated[i] for i in sorted(evaluated)]
            check_metric(so_far[0].run, metric)
            position = sorted(evaluated)[so_far.index(choose(so_far, metric, base)[0])]
            leader = next(v for v, unit in enumerate(units) if position in unit)
            for v in range(len(units)):  # an actor whose points can no longer be the best is done
                if states[v] and (v != leader or not keep):
                    _end(ray, actors[v])
        ordered = [evaluated[i] for i in range(len(points))]
        best, tied = choose(ordered, metric, base)
        test_run = None
        if test:
            if progress:
                progress(len(ordered), total, "test")
            tester = actors[leader] if keep else unit_actor.remote(*args)
            actors.append(tester)
            test_run, after = result_of(ray, tester.test.remote(best, base), "the test of the best configuration")
            if keep:
                states[leader] = after
            else:  # a new actor fitted the best again: its work is counted, its index is the unit's
                states.append(after)
    finally:
        for a in actors:
            _end(ray, a)
    sweep = Sweep(name, str(index_dir), str(golden), split, metric, grid, base, ordered, best, tied, test_run, [],
                  time.perf_counter() - started, timing=_summed([s["timing"] for s in states]),
                  described=_indexes(states), counted=_summed([s["cache"] for s in states]))
    if progress:
        progress(total, total, "done")
    return sweep


def result_of(ray: Any, ref: Any, what: str, outcome: str = "the sweep was not written") -> Any:
    """The result of `ref`; an error of glassrag's raised on a node is raised here as it was,
    any other failure is ShardError naming `what` (a node or an actor lost: run again, with
    `outcome`, what was left undone, in the hint)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        if isinstance(err.cause, GlassragError):
            raise err.cause from None
        raise ShardError(f"{what} failed on the cluster: {type(err.cause).__name__}: {err.cause}",
                         f"the traceback is in the node's Ray logs; {outcome}") from None
    except ray.exceptions.RayError as err:
        raise ShardError(f"{what} was lost on the cluster: {type(err).__name__}: {err}",
                         f"{outcome}; run again (with --ray, once the cluster is whole, or without it)") from None


def _end(ray: Any, actor: Any) -> None:
    """End an actor (again: ending an ended one does nothing)."""
    try:
        ray.kill(actor)
    except Exception:  # noqa: BLE001  (already gone: nothing to end)
        pass


def _summed(counts: Sequence[dict[str, float]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + v
    return out


def _indexes(states: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each index once, in the order the sequential run first uses them: every unit's list
    starts with the swept index, then its own, and the units are in the order of their first
    point."""
    seen: dict[str, dict[str, Any]] = {}
    for s in states:
        for d in s["indexes"]:
            seen.setdefault(d["fingerprint"], d)
    return list(seen.values())
