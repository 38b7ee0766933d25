"""The indexes and calibrations a sweep evaluates its configurations on.

- **One index per set of index-time settings.** A configuration that changes a setting
  needing a re-ingest (chunker, size, analyzer, LSA, embedder) is evaluated on an index
  built from the same source documents with those settings, kept by a fingerprint of them
  under INDEX/sweeps/indexes/FINGERPRINT/ (written like any index: a temporary folder
  renamed into place) and reused by later sweeps. Like `glassrag demo`, a built index gets
  the learned reranker trained and the gate and reader calibrated on the train split when
  the swept index has them.
- **The gate calibrated for each configuration's settings.** A calibration is valid only for
  the settings it was made with (gate/threshold.py); a configuration whose settings differ
  (k1, the reranker, the gate's rule or cost) has its gate and reader calibrated on the train
  split, as `glassrag calibrate` would, so every configuration is measured with a working
  gate. The pass reuses the stage cache: only the gate's own work is new.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.grid import reingest_settings
from glassrag.evaluate.relevance import Judge
from glassrag.gate.threshold import offtopic_keep
from glassrag.evaluate.remember import Remembered, RememberedChunks, RememberingIndex, RememberingJudge
from glassrag.pipeline import Pipeline
from glassrag.stage_cache import StageCache, digest
from glassrag.store.base import Index


def fingerprint(config: Config) -> str:
    """A short digest of the settings an index is built with."""
    return digest("index", reingest_settings(config))[:12]


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


@dataclass
class Variant:
    """One index of the sweep, with its stage cache, its judge and its calibrations."""

    fingerprint: str
    index: Index
    path: str
    built: bool  # made by this sweep (False: the swept index, or one kept by an earlier sweep)
    seconds: float
    cache: StageCache | None
    judge: Judge
    calibrations: dict[str, Index] = field(default_factory=dict)

    def describe(self, base: Config) -> dict[str, Any]:
        mine = reingest_settings(self.index.config)
        theirs = reingest_settings(base)
        return {"fingerprint": self.fingerprint, "path": self.path, "built": self.built,
                "seconds": round(self.seconds, 3), "chunks": len(self.index.chunks),
                "settings": {n: v for n, v in mine.items() if theirs.get(n) != v}}


def variant_for(index: Index, path: str, caching: bool, built: bool = False, seconds: float = 0.0) -> Variant:
    """The sweep's view of an index: chunks kept once read, judgements kept, a stage cache."""
    fp = fingerprint(index.config)
    if caching:
        index = RememberingIndex(**{**{f.name: getattr(index, f.name) for f in fields(Index)},
                                    "chunks": RememberedChunks(index.chunks),
                                    "documents": Remembered(index.documents)})
    return Variant(fp, index, path, built, seconds, StageCache(fp) if caching else None,
                   RememberingJudge(index.chunks) if caching else Judge(index.chunks))


def build_variant(base: Index, config: Config, docs: Sequence[Path], folder: Path,
                  questions: Sequence[Question], golden: str, caching: bool) -> Variant:
    """The index of `config`'s index-time settings: read from `folder` when an earlier sweep
    built it, else built from `docs`, trained and calibrated like `glassrag demo`, and saved."""
    from glassrag.evaluate.tune import calibrate_index, train_reranker
    from glassrag.indexer import build_index
    from glassrag.store import EmbeddedStore

    store = EmbeddedStore(folder)
    t0 = time.perf_counter()
    if store.exists():
        found = store.read()
        if fingerprint(found.config) == fingerprint(config):
            return variant_for(found, str(folder), caching, False, time.perf_counter() - t0)
    index, report = build_index(list(docs), config)
    if not index.chunks:
        raise ConfigError(f"no chunk was made from {', '.join(map(str, docs))} with {fingerprint(config)}",
                          "check --docs")
    if base.extra.get("reranker"):
        index.extra["reranker"] = train_reranker(index, config, questions, golden)
    if base.extra.get("gate"):
        index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions,
                                                                     config.gate.rule, golden)
    store.write(index)
    return variant_for(store.read(), str(folder), caching, True, time.perf_counter() - t0)


def calibrated(variant: Variant, config: Config, questions: Sequence[Question], golden: str) -> tuple[Index, str]:
    """The variant's index with a gate (and reader) calibrated for `config`, and how: "index"
    (its own calibration fits these settings), "train" (calibrated here on the train split),
    or "none" (the index has no calibration, so the gate declines only what matches nothing)."""
    from glassrag.evaluate.tune import calibrate_index

    index = variant.index
    gate = index.extra.get("gate")
    if not gate:
        return index, "none"
    settings = Pipeline(index, config).scoring_settings()
    same_rule = gate.get("rule") == config.gate.rule and (config.gate.rule != "cost"
                                                          or gate.get("cost") == config.gate.cost)
    same_rule = same_rule and offtopic_keep(gate) == config.gate.offtopic_keep
    if gate.get("settings") == settings and same_rule:
        return index, "index"
    key = digest(settings, config.gate.rule, config.gate.cost, config.gate.offtopic_keep, config.answer.budget_words)
    if key not in variant.calibrations:
        made, reader = calibrate_index(index, config, questions, config.gate.rule, golden,
                                       cache=variant.cache, judge=variant.judge)
        variant.calibrations[key] = replace(index, extra={**index.extra, "gate": made, "reader": reader})
    return variant.calibrations[key], "train"
