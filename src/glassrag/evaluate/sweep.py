"""A sweep: every configuration of a grid evaluated on one split, the best chosen by one
metric, and that configuration alone evaluated on the test split, once.

    sweep = run_sweep("idx", "golden.jsonl", from_flags(["bm25.k1=0.9,1.5", "bm25.b=0.4,0.75"]))
    write_sweep(sweep, Path("idx/sweeps/k1-b"))

Stages shared by configurations run once (glassrag/stage_cache.py): a k1 × b grid re-runs
BM25 and what follows it, never the analysis or LSA. The selection metric defaults to
`ranking mrr@10`: it is read before the gate, so it does not move with the gate's
calibration, and it is graded, so it ties less than a hit rate on a hundred questions.
A tie goes to the configuration nearest the starting settings (grid.distance).
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.grid import Grid, Point, configure, distance, reingest_settings
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.variants import (Variant, build_variant, calibrated, fingerprint,
                                        source_roots, variant_for)
from glassrag.pipeline import Pipeline
from glassrag.provenance import provenance
from glassrag.schema import Run, flat_spec
from glassrag.store.pgschema import redact

SWEEP_FORMAT = "glassrag-sweep"
SWEEP_FORMAT_VERSION = 1
DEFAULT_METRIC = "ranking mrr@10"
Progress = Callable[[int, int, str], None]


@dataclass
class Evaluated:
    """One configuration of the sweep and its run."""

    name: str
    point: Point
    config: Config
    run: Run
    index: str  # fingerprint
    gate: str  # how its gate was calibrated: index, train, none
    seconds: float

    def metric(self, name: str) -> dict[str, Any]:
        return dict(self.run.flat_metrics().get(name) or {"value": None})


@dataclass
class Sweep:
    name: str
    index_path: str
    golden: str
    split: str
    metric: str
    grid: Grid
    base: Config
    configs: list[Evaluated]
    best: Evaluated
    tied: list[str]
    test: Run | None
    variants: list[Variant]
    seconds: float
    uncached_seconds: float | None = None
    timing: dict[str, float] = field(default_factory=dict)

    def cache_counts(self) -> dict[str, int]:
        counts = {"hits": 0, "misses": 0, "stored": 0}
        for v in self.variants:
            if v.cache is not None:
                for k, n in v.cache.counts().items():
                    counts[k] += n
        return counts

    def to_dict(self) -> dict[str, Any]:
        def metrics(run: Run) -> dict[str, Any]:
            flat = run.flat_metrics()
            return {n: flat[n] for n in (self.metric, f"answer hit@{run.k}", f"ranking hit@{run.k}",
                                         "ranking mrr@10", "ranking ndcg@10",
                                         "answer declined_unanswerable") if n in flat}

        test = None
        if self.test is not None:
            test = {"run": "runs/best-test.json", "config": self.best.name,
                    "questions": self.test.golden.get("questions"), "metric": _cell(self.test, self.metric),
                    "metrics": metrics(self.test),
                    "note": "evaluated once, for the configuration chosen on the "
                            f"{self.split} split; no other configuration saw the test split"}
        return {
            "format": SWEEP_FORMAT, "format_version": SWEEP_FORMAT_VERSION, "name": self.name,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "index": redact(self.index_path),
            "golden": self.golden, "split": self.split, "metric": self.metric, "better": flat_spec(self.metric).better,
            "grid": self.grid.to_dict(), "size": len(self.configs),
            "starting_settings": {n: self.base.value(n) for n in self.grid.settings()},
            "configs": [{"name": e.name, "settings": dict(e.point), "run": f"runs/{e.name}.json",
                         "index": e.index, "gate": e.gate, "seconds": round(e.seconds, 3),
                         "metric": _cell(e.run, self.metric), "metrics": metrics(e.run)}
                        for e in self.configs],
            "best": {"name": self.best.name, "settings": dict(self.best.point),
                     "metric": _cell(self.best.run, self.metric), "tied_with": self.tied,
                     "rule": f"the {flat_spec(self.metric).better} {self.metric} on the {self.split} split; a tie goes "
                             "to the configuration that changes the fewest starting settings, then the least"},
            "test": test,
            "indexes": [v.describe(self.base) for v in self.variants],
            "timing": {"seconds": round(self.seconds, 3), **{k: round(v, 3) for k, v in self.timing.items()},
                       "uncached_seconds": None if self.uncached_seconds is None else round(self.uncached_seconds, 3),
                       "speedup": (round(self.uncached_seconds / self.seconds, 2)
                                   if self.uncached_seconds and self.seconds else None),
                       "cache": self.cache_counts()},
            "provenance": provenance({"lsa.seed": self.base.lsa.seed, "generate.seed": self.base.generate.seed}),
        }


def _cell(run: Run, metric: str) -> dict[str, Any] | None:
    cell = run.flat_metrics().get(metric)
    return dict(cell) if cell else None


def run_sweep(index_dir: str | Path, golden: str | Path, grid: Grid, *, split: str = "train",
              metric: str = DEFAULT_METRIC, base: Config | None = None, docs: Sequence[Path] | None = None,
              test: bool = True, caching: bool = True, measure_uncached: bool = False,
              calibrate: bool = True, name: str = "", progress: Progress | None = None) -> Sweep:
    """Evaluate every configuration of `grid` on `split` of `golden`, choose the best by
    `metric`, evaluate it on the test split once (`test`; only when the choice was made on
    train). `base`: the settings every
    configuration starts from (default: the index's). `docs`: where to re-read the documents
    for index-time settings (default: the folders the index was read from). With
    `measure_uncached`, every configuration is evaluated again without any cache, to time it."""
    from glassrag.store import EmbeddedStore

    started = time.perf_counter()
    index_dir = Path(index_dir)
    stored = EmbeddedStore(index_dir).read()
    base = base or stored.config
    golden = Path(golden)
    questions = _questions(golden, split, stored)
    if not questions:
        raise ConfigError(f"{golden} has no questions in the {split} split", "sweep another --split")
    train = questions if split == "train" else _questions(golden, "train", stored)
    test = test and split == "train"  # a choice made on test questions has no untouched test left
    points = grid.points()
    configs = [(n, p, configure(base, p)) for n, p in points]
    if any(c.generate.enabled for _, _, c in configs):
        raise ConfigError("the sweep does not generate answers", "leave [generate] enabled off for a sweep")
    timing = {"indexes_seconds": 0.0, "calibration_seconds": 0.0, "evaluation_seconds": 0.0}
    variants: dict[str, Variant] = {fingerprint(stored.config): variant_for(stored, str(index_dir), caching)}
    todo = [c for _, _, c in configs if fingerprint(c) not in variants]
    roots = list(docs) if docs else (source_roots(stored) if todo else [])
    evaluated: list[Evaluated] = []
    total = len(configs) + (1 if test else 0)
    for i, (cname, point, config) in enumerate(configs, 1):
        if progress:
            progress(i - 1, total, cname)
        variant = _variant(variants, stored, config, roots, index_dir, train, golden, caching, timing)
        evaluated.append(_evaluate(cname, point, config, variant, questions, train, golden, split,
                                   str(index_dir), calibrate, timing))
        if i == 1:
            check_metric(evaluated[0].run, metric)
    best, tied = choose(evaluated, metric, base)
    test_run = None
    if test:
        if progress:
            progress(len(configs), total, "test")
        test_qs = _questions(golden, "test", stored)
        variant = variants[fingerprint(best.config)]
        test_run = _evaluate("best-test", best.point, best.config, variant, test_qs, train, golden,
                             "test", str(index_dir), calibrate, timing).run
    if progress:
        progress(total, total, "done")
    seconds = time.perf_counter() - started
    sweep = Sweep(name, str(index_dir), str(golden), split, metric, grid, base, evaluated, best, tied,
                  test_run, list(variants.values()), seconds, timing=timing)
    if measure_uncached:
        sweep.uncached_seconds = uncached_seconds(sweep, questions, train, calibrate, progress)
    return sweep


def _questions(golden: Path, split: str, stored: Any) -> list[Question]:
    from glassrag.evaluate.beir import load_beir_questions
    from glassrag.evaluate.golden import load_golden

    if golden.is_dir():
        return load_beir_questions(golden, split)
    return load_golden(golden, split, stored.documents)


def _variant(variants: dict[str, Variant], stored: Any, config: Config, roots: Sequence[Path],
             index_dir: Path, train: Sequence[Question], golden: Path, caching: bool,
             timing: dict[str, float]) -> Variant:
    fp = fingerprint(config)
    if fp not in variants:
        t0 = time.perf_counter()
        only_index_time = _index_time(stored.config, config)
        variants[fp] = build_variant(stored, only_index_time, roots, index_dir / "sweeps" / "indexes" / fp,
                                     train, str(golden), caching)
        timing["indexes_seconds"] += time.perf_counter() - t0
    return variants[fp]


def _index_time(stored: Config, config: Config) -> Config:
    """The swept index's settings with `config`'s index-time ones: what a variant is built,
    trained and calibrated with (the configurations' query-time settings come later)."""
    changed: dict[str, dict[str, Any]] = {}
    for name, value in reingest_settings(config).items():
        if stored.value(name) != value:
            section, key = name.split(".", 1)
            changed.setdefault(section, {})[key] = value
    return stored.updated(changed, "sweep", "flag")


def _evaluate(name: str, point: Point, config: Config, variant: Variant, questions: Sequence[Question],
              train: Sequence[Question], golden: Path, split: str, index_path: str, calibrate: bool,
              timing: dict[str, float]) -> Evaluated:
    t0 = time.perf_counter()
    index, how = calibrated(variant, config, train, str(golden)) if calibrate else (variant.index, "index")
    t1 = time.perf_counter()
    run = evaluate(Pipeline(index, config, variant.cache), questions, golden_path=str(golden), split=split,
                   index_path=index_path, judge=variant.judge)
    t2 = time.perf_counter()
    timing["calibration_seconds"] += t1 - t0
    timing["evaluation_seconds"] += t2 - t1
    return Evaluated(name, point, config, run, variant.fingerprint, how, t2 - t0)


def choose(evaluated: Sequence[Evaluated], metric: str, base: Config) -> tuple[Evaluated, list[str]]:
    """The best configuration by `metric` (its direction from its MetricSpec), and the names of
    those tied with it; ties go to the one nearest `base`, then to the first in the grid."""
    check_metric(evaluated[0].run, metric)
    sign = 1.0 if flat_spec(metric).better == "higher" else -1.0

    def value(e: Evaluated) -> float:
        v = e.metric(metric).get("value")
        return -float("inf") if v is None else sign * round(float(v), 12)

    top = max(value(e) for e in evaluated)
    tied = [e for e in evaluated if value(e) == top]
    best = min(tied, key=lambda e: (distance(e.point, base), evaluated.index(e)))
    return best, [e.name for e in tied if e is not best]


def check_metric(run: Run, metric: str) -> None:
    """ConfigError listing the metrics a run has when `metric` is not one of them."""
    known = run.flat_metrics()
    if metric not in known:
        raise ConfigError(f"unknown metric {metric!r}", "choose one of: " + ", ".join(known))


def uncached_seconds(sweep: Sweep, questions: Sequence[Question], train: Sequence[Question],
                     calibrate: bool, progress: Progress | None = None) -> float:
    """The sweep's configurations evaluated again as `glassrag calibrate` and `glassrag eval`
    would, one by one, with no cache: the time it takes (the runs are dropped)."""
    from glassrag.store import EmbeddedStore

    plain = {v.fingerprint: variant_for(EmbeddedStore(v.path).read(), v.path, caching=False)
             for v in sweep.variants}
    t0 = time.perf_counter()
    timing: dict[str, float] = {"calibration_seconds": 0.0, "evaluation_seconds": 0.0}
    for i, e in enumerate(sweep.configs):
        if progress:
            progress(i, len(sweep.configs), f"uncached {e.name}")
        _evaluate(e.name, e.point, e.config, plain[e.index], questions, train, Path(sweep.golden),
                  sweep.split, sweep.index_path, calibrate, timing)
    return time.perf_counter() - t0


def sweeps_folder(index_dir: str | Path) -> Path:
    """Where sweeps are kept by default: INDEX/sweeps/NAME/ (the analytics page reads them)."""
    return Path(index_dir) / "sweeps"


def write_sweep(sweep: Sweep, target: Path) -> Path:
    """The sweep folder: runs/NAME.json per configuration (docs/run-format.md), runs/best-test.json
    and sweep.json, written in a temporary folder renamed into place (an earlier sweep of the
    same name is replaced only once the new one is complete)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "runs").mkdir(parents=True)
    for e in sweep.configs:  # compact: a run file is read by programs (compare, the web app)
        _write_json(tmp / "runs" / f"{e.name}.json", e.run.to_dict(deep=False), compact=True)
    if sweep.test is not None:
        _write_json(tmp / "runs" / "best-test.json", sweep.test.to_dict(deep=False), compact=True)
    _write_json(tmp / "sweep.json", sweep.to_dict())
    old = target.with_name(f".{target.name}.old")
    if target.exists():
        if old.exists():
            shutil.rmtree(old)
        target.rename(old)
    tmp.rename(target)
    if old.exists():
        shutil.rmtree(old)
    return target


def _write_json(path: Path, data: Any, compact: bool = False) -> None:
    text = (json.dumps(data, ensure_ascii=False, separators=(",", ":")) if compact
            else json.dumps(data, ensure_ascii=False, indent=1))
    path.write_text(text, encoding="utf-8")
