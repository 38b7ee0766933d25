"""A sweep: every configuration of a grid evaluated on one split, the best chosen by one
metric, and that configuration alone evaluated on the test split, once.

    sweep = run_sweep("idx", "golden.jsonl", from_flags(["bm25.k1=0.9,1.5", "bm25.b=0.4,0.75"]))
    write_sweep(sweep, Path("idx/sweeps/k1-b"))

The configurations are measured on a workbench (evaluate/workbench.py, `sweep_workbench`):
the swept index, and an index per other set of index-time settings, each fitted as the
swept one was and calibrated again for a configuration its calibration does not fit.
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
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError, DiskError
from glassrag.evaluate import DEFAULT_METRIC
from glassrag.evaluate.fitting import AS_BUILT, SWEEP
from glassrag.evaluate.golden import Question
from glassrag.evaluate.grid import Grid, configure, distance
from glassrag.evaluate.measure import Evaluated, check_metric, measure, measured
from glassrag.evaluate.variant import Variant, cache_counts, fingerprint
from glassrag.evaluate.workbench import Steps, Workbench
from glassrag.provenance import provenance
from glassrag.schema import Run, flat_spec
from glassrag.store.base import Index
from glassrag.store.pgschema import redact

SWEEP_FORMAT = "glassrag-sweep"
SWEEP_FORMAT_VERSION = 1
Progress = Callable[[int, int, str], None]


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
    # a sweep run on a cluster (evaluate/on_ray.py) keeps its indexes there: their descriptions
    # and the stage caches' counts, summed over its units, come back instead of `variants`
    described: list[dict[str, Any]] | None = None
    counted: dict[str, int] | None = None

    def cache_counts(self) -> dict[str, int]:
        return dict(self.counted) if self.counted is not None else cache_counts(self.variants)

    def indexes(self) -> list[dict[str, Any]]:
        """Each index a configuration ran on (Variant.describe), the swept one first."""
        return list(self.described) if self.described is not None else [v.describe(self.base) for v in self.variants]

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
            "indexes": self.indexes(),
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
              calibrate: bool = True, name: str = "", progress: Progress | None = None,
              steps: Steps | None = None) -> Sweep:
    """Evaluate every configuration of `grid` on `split` of `golden`, choose the best by
    `metric`, evaluate it on the test split once (`test`; only when the choice was made on
    train). `base`: the settings every
    configuration starts from (default: the index's). `docs`: where to re-read the documents
    for index-time settings (default: the folders the index was read from). With
    `measure_uncached`, every configuration is evaluated again without any cache, to time it.
    `progress(done, total, name)` hears each configuration begin, `steps(what, done, total)` the
    questions of each fit and evaluation (evaluate/workbench.py)."""
    started = time.perf_counter()
    index_dir, golden = Path(index_dir), Path(golden)
    stored, base, test, sources = sweep_inputs(index_dir, grid, split, base, docs, test)
    workbench = sweep_workbench(stored, index_dir, golden, sources, split, test, calibrate, caching)
    workbench.steps = steps
    if not workbench.split(split):
        raise ConfigError(f"{golden} has no questions in the {split} split", "sweep another --split")
    total = len(grid) + (1 if test else 0)
    evaluated = measure(workbench, base, grid, split, metric,
                        progress and (lambda n, what: progress(n, total, what)))
    best, tied = choose(evaluated, metric, base)
    test_run = None
    if test:
        if progress:
            progress(len(evaluated), total, "test")
        test_run = measured(workbench, "best-test", best.point, best.config, "test").run
    if progress:
        progress(total, total, "done")
    sweep = Sweep(name, str(index_dir), str(golden), split, metric, grid, base, evaluated, best, tied,
                  test_run, workbench.variants(), time.perf_counter() - started, timing=workbench.timing)
    if measure_uncached:
        sweep.uncached_seconds = uncached_seconds(sweep, calibrate, progress)
    return sweep


def sweep_inputs(index_dir: Path, grid: Grid, split: str, base: Config | None, docs: Sequence[Path] | None,
                 test: bool) -> tuple[Index, Config, bool, list[Path]]:
    """What a sweep starts from: the swept index, the settings every configuration starts from
    (`base`, else the index's), whether the best is tested (only when chosen on train) and
    the documents an index of other index-time settings is built from (`_sources`)."""
    from glassrag.store import EmbeddedStore

    stored = EmbeddedStore(index_dir).read()
    base = base or stored.config
    configs = [configure(base, point) for _, point in grid.points()]
    if any(c.generate.enabled for c in configs):
        raise ConfigError("the sweep does not generate answers", "leave [generate] enabled off for a sweep")
    # a choice made on test questions has no untouched test left
    return stored, base, test and split == "train", _sources(stored, configs, docs)


def sweep_workbench(stored: Index, index_dir: Path, golden: Path, docs: Sequence[Path], split: str, test: bool,
                    calibrate: bool, caching: bool) -> Workbench:
    """The workbench a sweep measures on: the swept index as its base, an index per other set
    of index-time settings built from `docs` and kept under INDEX/sweeps/indexes/FINGERPRINT/,
    fitted as `glassrag demo` fits (fitting.SWEEP; AS_BUILT without `calibrate`)."""
    def build(config: Config) -> Index:
        from glassrag.indexer import build_index

        index, _ = build_index(list(docs), config, progress=bench.steps)
        if not index.chunks:
            raise ConfigError(f"no chunk was made from {', '.join(map(str, docs))} with {fingerprint(config)}",
                              "check --docs")
        return index

    bench = Workbench(_questions(golden, split, test, stored), str(golden), label=str(index_dir), base=stored,
                      build=build, folder=index_dir / "sweeps" / "indexes", fitting=SWEEP if calibrate else AS_BUILT,
                      caching="all" if caching else "none")
    return bench


def _sources(stored: Index, configs: Sequence[Config], docs: Sequence[Path] | None) -> list[Path]:
    """`docs`, else the folders the index was read from when a configuration needs another
    index (none when every configuration runs on the swept index)."""
    if docs:
        return list(docs)
    own = fingerprint(stored.config)
    return source_roots(stored) if any(fingerprint(c) != own for c in configs) else []


def _questions(golden: Path, split: str, test: bool, stored: Any) -> list[Question]:
    """The questions a sweep reads: the split it compares on, the train split (what is fitted
    is fitted on it) and, when the best is tested, the test split."""
    from glassrag.evaluate.beir import load_beir_questions
    from glassrag.evaluate.golden import load_golden

    splits = ["all"] if split == "all" else list(dict.fromkeys(["train", split, *(["test"] if test else [])]))
    load = (lambda s: load_beir_questions(golden, s)) if golden.is_dir() else (
        lambda s: load_golden(golden, s, stored.documents))
    return [q for s in splits for q in load(s)]


def source_roots(index: Index) -> list[Path]:
    """The folders the index's documents were read from, recovered from each document's
    source path and its path-derived id (`manuals/tx200` read from ROOT/manuals/tx200.md),
    so a re-ingest gives the documents the same ids."""
    roots: list[Path] = []
    for doc in index.documents.values():
        if doc.format == "beir":
            raise ConfigError("this index was built from a BEIR corpus: the sweep cannot find its files",
                              "give the corpus folder with --docs")
        source = Path(doc.source)
        depth = len(PurePosixPath(doc.id).parts)
        root = source.parents[depth - 1] if depth <= len(source.parents) else source.parent
        if not root.is_dir():
            raise ConfigError(f"document {doc.id} was read from {source}, which is gone",
                              "give the source documents with --docs PATH")
        if root not in roots:
            roots.append(root)
    return roots


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


def uncached_seconds(sweep: Sweep, calibrate: bool, progress: Progress | None = None) -> float:
    """The sweep's configurations evaluated again as `glassrag calibrate` and `glassrag eval`
    would, one by one, with no cache: the time it takes (the runs are dropped). Its indexes
    are read from where the sweep kept them before the clock starts."""
    from glassrag.store import EmbeddedStore

    index_dir, golden = Path(sweep.index_path), Path(sweep.golden)
    stored = EmbeddedStore(index_dir).read()
    plain = sweep_workbench(stored, index_dir, golden, [], sweep.split, False, calibrate, caching=False)
    for e in sweep.configs:
        plain.variant(e.config)
    t0 = time.perf_counter()
    for i, e in enumerate(sweep.configs):
        if progress:
            progress(i, len(sweep.configs), f"uncached {e.name}")
        measured(plain, e.name, e.point, e.config, sweep.split)
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
    try:
        (tmp / "runs").mkdir(parents=True)
        for e in sweep.configs:  # compact: a run file is read by programs (compare, the web app)
            _write_json(tmp / "runs" / f"{e.name}.json", e.run.to_dict(deep=False), compact=True)
        if sweep.test is not None:
            _write_json(tmp / "runs" / "best-test.json", sweep.test.to_dict(deep=False), compact=True)
        _write_json(tmp / "sweep.json", sweep.to_dict())
    except OSError as err:  # a full disk: no half-written sweep is left, an earlier one stays
        shutil.rmtree(tmp, ignore_errors=True)
        raise DiskError.of(str(target), err, "no sweep was written; an earlier one of this name is as it was") or err
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
