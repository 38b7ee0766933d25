"""Measuring settings: `(workbench, base, grid, split, metric) → runs`. Every configuration of
a grid (evaluate/grid.py), each the base settings with its point's, is run on one split of the
workbench's corpus (evaluate/workbench.py: its index, fitted on train, through the index's
stage cache). A sweep chooses among them (evaluate/sweep.py); the experiment log and the
benchmarks run single configurations on the same workbench (`Workbench.run`).

    evaluated = measure(workbench, Config(), from_flags(["bm25.k1=0.9,1.5"]), "train", "ranking mrr@10")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.grid import Grid, Point, configure
from glassrag.evaluate.workbench import Workbench
from glassrag.schema import Run

Progress = Callable[[int, str], None]  # configurations done, the one starting


@dataclass
class Evaluated:
    """One configuration measured: its name and settings, its run, the fingerprint of the index
    it ran on, how its gate was calibrated (fitting.calibrated) and the seconds its fitting
    and evaluation took."""

    name: str
    point: Point
    config: Config
    run: Run
    index: str  # fingerprint
    gate: str  # index, train or none
    seconds: float

    def metric(self, name: str) -> dict[str, Any]:
        return dict(self.run.flat_metrics().get(name) or {"value": None})


def measure(workbench: Workbench, base: Config, grid: Grid, split: str, metric: str,
            progress: Progress | None = None) -> list[Evaluated]:
    """Every configuration of `grid`, started from `base`, run on `split`, in the grid's order;
    ConfigError as soon as the first run shows that `metric` is not one a run has."""
    out: list[Evaluated] = []
    for n, (name, point) in enumerate(grid.points()):
        if progress:
            progress(n, name)
        out.append(measured(workbench, name, point, configure(base, point), split))
        if n == 0:
            check_metric(out[0].run, metric)
    return out


def measured(workbench: Workbench, name: str, point: Point, config: Config, split: str) -> Evaluated:
    """One configuration run on `split`, with the seconds its fitting and evaluation took
    (its index is read or built before: a sweep counts that time apart)."""
    variant = workbench.variant(config)
    before = workbench.spent()
    run = workbench.run(config, split)
    return Evaluated(name, point, config, run, variant.fingerprint, workbench.fitted(config)[1],
                     workbench.spent() - before)


def check_metric(run: Run, metric: str) -> None:
    """ConfigError listing the metrics a run has when `metric` is not one of them."""
    known = run.flat_metrics()
    if metric not in known:
        raise ConfigError(f"unknown metric {metric!r}", "choose one of: " + ", ".join(known))
