"""One corpus measured under many settings: the core that sweeps (evaluate/sweep.py), the
experiment log (experiment/), the lab (lab/base.py) and the benchmarks (bench/) measure a
setting with (issue 29).

A `Workbench` holds a corpus's labelled questions and how to build an index of its
documents, and gives for any configuration

(a) `variant(config)`: the index of its index-time settings (chunker, size, analyzer, LSA,
    embedder): the base index when they are its own, else one built once and kept in the
    workbench's folder under their fingerprint, reused by a later workbench;
(b) `fitted(config)`: that index with the learned reranker and the gate's and reader's
    calibration fitted on the train split, as the workbench's `Fitting` says
    (evaluate/fitting.py), a calibration that already fits the settings reused;
(c) `run(config, split)`: its evaluation on a split through the one stage cache of its index
    (glassrag/stage_cache.py), so stages shared by configurations run once; remembered by
    the configuration, so a baseline several experiments share is run once.

`measure` (evaluate/measure.py) runs a grid of settings on a workbench.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.fitting import SWEEP, Fitting, calibrated, inherited, reranked
from glassrag.evaluate.golden import Question
from glassrag.evaluate.grid import reingest_settings
from glassrag.evaluate.variant import CACHING, Variant, fingerprint, variant_for
from glassrag.pipeline import Pipeline
from glassrag.schema import Run
from glassrag.store.base import Index

Builder = Callable[[Config], Index]  # an index of the corpus's documents with these settings
Steps = Callable[[str, int, int], None]  # (what it is doing, done, total: 0 when not known), as build_index's


class Workbench:
    """A corpus's indexes, fitted indexes and runs, each made once (module docstring).

    `questions`: every labelled question (train and test); `golden`: where they came from, as
    runs and fitted models record it; `label`: the index as runs record it. `base`: an index
    to start from (a sweep's, the lab's): its settings are what a built index is built with
    besides a configuration's index-time ones, and what it has fitted a built index is fitted
    with too, as `glassrag demo` does. `build` makes an index of the documents and `folder`
    keeps what it made, one folder per fingerprint (None: kept in memory only); without
    `build` only the base index's settings can be measured. `keep`: at most this many fitted
    indexes and runs remembered, all forgotten when one more comes (a long-running server's
    lab: settings asked for over days); None remembers every one (a sweep, an experiment).
    `steps`, when set, hears each question as a fit or an evaluation runs it (what, done,
    total), for a progress bar (issue 49: an experiment ran minutes without a word)."""

    def __init__(self, questions: Sequence[Question], golden: str, *, label: str = "", base: Index | None = None,
                 build: Builder | None = None, folder: Path | None = None, fitting: Fitting = SWEEP,
                 caching: str = "stages", keep: int | None = None) -> None:
        if caching not in CACHING:
            raise ValueError(f"caching {caching!r} is not one of {CACHING}")
        self.questions, self.golden, self.label = list(questions), golden, label
        self.base, self.build, self.folder = base, build, folder
        self.fitting, self.caching, self.keep = fitting, caching, keep
        self.steps: Steps | None = None
        self.timing = {"indexes_seconds": 0.0, "calibration_seconds": 0.0, "evaluation_seconds": 0.0}
        self._variants: dict[str, Variant] = {}
        self._fitted: dict[str, tuple[Index, str]] = {}
        self._runs: dict[tuple[str, str], Run] = {}
        if base is not None:
            self._variants[fingerprint(base.config)] = variant_for(base, label, caching)

    def split(self, name: str) -> list[Question]:
        """The questions of one split (train, test, or all of them)."""
        return [q for q in self.questions if name == "all" or q.split == name]

    def variants(self) -> list[Variant]:
        """Every index used so far, the base first, then in the order they were first asked for."""
        return list(self._variants.values())

    def variant(self, config: Config) -> Variant:
        """(a) The index of `config`'s index-time settings, read or built once."""
        fp = fingerprint(config)
        if fp not in self._variants:
            t0 = time.perf_counter()
            self._variants[fp] = self._made(config, fp)
            self.timing["indexes_seconds"] += time.perf_counter() - t0
        return self._variants[fp]

    def index(self, config: Config) -> Index:
        """The index of `config`'s index-time settings, as built (not fitted for `config`)."""
        return self.variant(config).index

    def _made(self, config: Config, fp: str) -> Variant:
        """Read from the folder when a workbench kept it there, else built, fitted as the base
        index is, and kept."""
        from glassrag.store import EmbeddedStore

        t0 = time.perf_counter()
        if self.build is None:
            raise ConfigError(f"{self.label or 'this index'} has no documents to build an index with other "
                              f"index-time settings from ({fingerprint(config)})",
                              "measure settings that need no re-ingest here")
        store = EmbeddedStore(self.folder / fp) if self.folder is not None else None
        if store is not None and store.exists():
            found = store.read()
            if fingerprint(found.config) == fp:
                return variant_for(found, str(store.path), self.caching, False, time.perf_counter() - t0)
        settings = self._built_with(config)
        index = self.build(settings)
        if self.base is not None:
            index.extra.update(inherited(self.base, index, settings, self.questions, self.golden))
        if store is None:
            return variant_for(index, "", self.caching, True, time.perf_counter() - t0)
        store.write(index)
        return variant_for(store.read(), str(store.path), self.caching, True, time.perf_counter() - t0)

    def _built_with(self, config: Config) -> Config:
        """The settings an index for `config` is built (and, from a base index, fitted) with:
        the base index's with `config`'s index-time ones, or `config` when there is no base."""
        return config if self.base is None else with_index_settings(self.base.config, config)

    def fitted(self, config: Config) -> tuple[Index, str]:
        """(b) The index to evaluate `config` on, and how its gate was calibrated: "index" (its
        own), "train" (here, on the train split, for these settings) or "none" (never)."""
        key = config.key()
        if key not in self._fitted:
            variant = self.variant(config)
            t0 = time.perf_counter()
            index = reranked(self.fitting, variant, config, self.questions, self.golden,
                             self._step("training the reranker"))
            self._make_room(self._fitted)
            self._fitted[key] = calibrated(self.fitting, variant, index, config, self.questions, self.golden,
                                           self._step("calibrating the gate"))
            self.timing["calibration_seconds"] += time.perf_counter() - t0
        return self._fitted[key]

    def pipeline(self, config: Config) -> Pipeline:
        """A pipeline of `config` on its fitted index, sharing the index's stage cache."""
        return Pipeline(self.fitted(config)[0], config, self.variant(config).cache)

    def run(self, config: Config, split: str) -> Run:
        """(c) `config` evaluated on the questions of `split`, once."""
        from glassrag.evaluate.runs import evaluate

        key = (config.key(), split)
        if key not in self._runs:
            self.fitted(config)  # timed as fitting, apart from the evaluation
            t0 = time.perf_counter()
            self._make_room(self._runs)
            self._runs[key] = evaluate(self.pipeline(config), self.split(split), golden_path=self.golden,
                                       split=split, index_path=self.label, judge=self.variant(config).judge,
                                       progress=self._step(f"evaluating ({split})"))
            self.timing["evaluation_seconds"] += time.perf_counter() - t0
        return self._runs[key]

    def _step(self, what: str) -> Callable[[int, int], None] | None:
        """A (done, total) callback that tells `steps` it is doing `what`; None without `steps`."""
        steps = self.steps
        return None if steps is None else (lambda done, total: steps(what, done, total))

    def _make_room(self, kept: dict[Any, Any]) -> None:
        """Forget everything `kept` holds when it is full (`keep`), as the lab's memo does."""
        if self.keep is not None and len(kept) >= self.keep:
            kept.clear()

    def spent(self) -> float:
        """The seconds fitting and evaluating took so far (building indexes apart)."""
        return self.timing["calibration_seconds"] + self.timing["evaluation_seconds"]


def with_index_settings(stored: Config, config: Config) -> Config:
    """`stored` with `config`'s index-time settings (those needing a re-ingest), each recorded
    as coming from the sweep: what an index for `config` is built with from a base index."""
    changed: dict[str, dict[str, Any]] = {}
    for name, value in reingest_settings(config).items():
        if stored.value(name) != value:
            section, key = name.split(".", 1)
            changed.setdefault(section, {})[key] = value
    return stored.updated(changed, "sweep", "flag")
