"""Experiments on a Ray cluster (`glassrag experiment run --ray`): every run the experiments
need, cut into units that keep the stage cache, measured side by side, then compared and decided
on the driver exactly as `run_experiments` does, so the evidence is the sequential run's.

    unit(experiment, corpus, arm) = (corpus, fingerprint(arm's configuration))

An experiment × corpus needs two runs, its baseline and its change, each one configuration on
the corpus's workbench (experiment/corpora.py). A unit is every such run whose index is the
same: the runs the sequential run makes on one index share that index's stage cache
(glassrag/stage_cache.py) and its calibrations, and a baseline several experiments share is run
once, so a unit gives each of them the same sharing; runs of two units never shared a cache. An
experiment whose change moves an index-time setting (a chunker, an analyzer) has its baseline in
one unit and its change in another; most (a reranker's pool, a gate's rule) have both in one.

Before the units, one task reads or builds every index they need, one after another: a corpus's
indexes share its embedding cache (WORK/embedding-cache/), which takes one writer, and an
abstention corpus's source folder is made once. Each unit then opens its index from the work
folder (.glassrag/experiments/ beside the log: a cluster of several machines needs it, and the
corpora, on a file system they share at the same path) and runs its configurations in the
order the log asks for them. The driver writes the run files, compares, decides and writes the
evidence (experiment/measure.py). Only `seconds` differs: the seconds the experiment's runs took
on the cluster (a run shared with an earlier experiment counted there, as the sequential run's
memo does). Ray is imported only here.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.evaluate.on_ray import result_of
from glassrag.evaluate.variant import cache_counts, fingerprint
from glassrag.experiment.corpora import Corpus, load_corpora, workbench
from glassrag.experiment.log import Experiment
from glassrag.experiment.measure import Measurer, kept_figures
from glassrag.schema import Run

NEEDS = ("experiments with --ray", "leave out --ray to run them on this machine")
Arm = tuple[Config, str]  # a configuration and the split it is evaluated on


@dataclass(frozen=True)
class Unit:
    """The runs of one corpus on one index (its fingerprint), in the order first asked for."""

    corpus: str
    fingerprint: str
    arms: tuple[Arm, ...]


def experiment_units(experiments: Sequence[Experiment], corpora: dict[str, Corpus], only: list[str] | None = None,
                     before: dict[str, dict[str, Any] | None] | None = None) -> list[Unit]:
    """The units of the runs `Measurer.measure` would ask for (the corpora it measures now: not
    kept from `before` under `only`, not missing on this machine), each run once, the units in
    the order of their first run."""
    arms: dict[tuple[str, str], dict[tuple[str, str], Arm]] = {}
    for e in experiments:
        for name in e.corpora:
            if kept_figures(name, only, (before or {}).get(e.name)) is not None or corpora[name].missing():
                continue
            for config in e.configs():
                unit = arms.setdefault((name, fingerprint(config)), {})
                unit.setdefault((config.key(), e.split), (config, e.split))
    return [Unit(c, fp, tuple(runs.values())) for (c, fp), runs in arms.items()]


def built(cwd: str, work: str, corpora: Sequence[Corpus], configs: Sequence[Config]) -> int:
    """Every index the units need, read or built, one after another (the module docstring says
    why): what the first task on the cluster does. Returns how many were built."""
    os.chdir(cwd)
    made = 0
    for corpus, config in zip(corpora, configs):
        made += workbench(corpus, Path(work)).variant(config).built
    return made


def measured(cwd: str, work: str, corpus: Corpus, arms: Sequence[Arm],
             _after: Any = None) -> tuple[list[Run], list[float], dict[str, int]]:
    """One unit: each arm run on the corpus's workbench, in order, sharing its index's stage
    cache; with the seconds each took and the cache's counts. `_after`: the index task, which
    Ray finishes first."""
    os.chdir(cwd)  # the driver's folder: relative paths name the same files, as the runs record them
    bench = workbench(corpus, Path(work))
    runs, seconds = [], []
    for config, split in arms:
        t0 = time.perf_counter()
        runs.append(bench.run(config, split))
        seconds.append(time.perf_counter() - t0)
    return runs, seconds, cache_counts(bench.variants())


class Remembered(Measurer):
    """A Measurer whose runs were made on the cluster: `run` reads them from `runs` (corpus,
    configuration key, split → Run), counting the seconds of each the first time it is read."""

    def __init__(self, work: Path, corpora: dict[str, Corpus], folder: Path, runs: dict[tuple[str, str, str], Run],
                 seconds: dict[tuple[str, str, str], float], progress: Callable[[str], None] | None = None) -> None:
        super().__init__(work, corpora, folder, progress)
        self.made, self.seconds, self.spent = runs, seconds, 0.0
        self._read: set[tuple[str, str, str]] = set()

    def run(self, corpus: Corpus, config: Config, split: str) -> Run:
        key = (corpus.name, config.key(), split)
        if key not in self._read:
            self._read.add(key)
            self.spent += self.seconds[key]
        return self.made[key]


def run_experiments_on_ray(log: Path, experiments: list[Experiment], progress: Callable[[str], None] | None = None,
                           only: list[str] | None = None, address: str | None = None) -> list[dict[str, Any]]:
    """`run_experiments` with the runs measured in units on the Ray cluster at `address` (else
    $GLASSRAG_RAY, else a one-machine cluster started here); the evidence written is the same."""
    from glassrag.experiment import read_evidence, work_folder, write_evidence
    from glassrag.shard.serve import connect

    say = progress or (lambda message: None)
    work, corpora = work_folder(log), load_corpora(log)
    before = {e.name: read_evidence(log, e.name) if only else None for e in experiments}
    checker = Measurer(work, corpora, work / "runs")
    for e in experiments:
        checker.check(e)
    units = experiment_units(experiments, corpora, only, before)
    ray = connect(address, NEEDS)
    cwd = os.getcwd()
    task = ray.remote(num_cpus=1, max_retries=0)
    indexes = task(built).remote(cwd, str(work), [corpora[u.corpus] for u in units], [u.arms[0][0] for u in units])
    unit_task = task(measured).options(scheduling_strategy="SPREAD")
    pending = {unit_task.remote(cwd, str(work), corpora[u.corpus], u.arms, indexes): u for u in units}
    say(f"{len(units)} units ({sum(len(u.arms) for u in units)} runs) on the cluster")
    runs: dict[tuple[str, str, str], Run] = {}
    seconds: dict[tuple[str, str, str], float] = {}
    counts: dict[str, int] = {"hits": 0, "misses": 0, "stored": 0}
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            u = pending.pop(ready[0])
            got, took, cache = result_of(ray, ready[0], f"the runs of {u.corpus} on index {u.fingerprint}",
                                         "no evidence was written")
            for (config, split), run, s in zip(u.arms, got, took):
                runs[(u.corpus, config.key(), split)], seconds[(u.corpus, config.key(), split)] = run, s
            counts = {k: counts[k] + cache[k] for k in counts}
            say(f"{u.corpus} index {u.fingerprint}: {len(u.arms)} run{'s' * (len(u.arms) > 1)} done, stage cache {cache['hits']:,} "
                f"reused, {cache['misses']:,} computed ({len(units) - len(pending)} of {len(units)} units)")
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
    measurer = Remembered(work, corpora, work / "runs", runs, seconds)
    results = []
    for e in experiments:
        measurer.spent = 0.0
        evidence = measurer.measure(e, only, before[e.name])
        evidence["seconds"] = round(measurer.spent, 1)
        write_evidence(log, evidence)
        results.append(evidence)
    say(f"stage cache over the units: {counts['hits']:,} stage outputs reused, {counts['misses']:,} computed")
    return results

