"""What is fitted on a golden set's train split and kept in the index (`index.extra`): the gate's
`Calibration` (`extra["gate"]`) and the learned reranker's `RerankerModel` (`extra["reranker"]`),
versioned records with to_dict/from_dict.

Each names the fields its readers decide by and keeps everything else it was fitted with
(sweeps, intervals, counts) in `fit`, as stored. `to_dict` gives the dict the gate, the
reranker and the web read, with its `version`; `from_dict` reads every version written so far:

- version 1: the dicts stored before these records, with no `version` key (the same fields);
- version 2: the same, with `version`.

A stored record of a later version than this glassrag knows, or without a field its readers
need, raises StoreError saying what to do. The store reads and writes `extra` through
`read_extra`, so every reader sees the current shape whatever version the index was written
with, and every index written holds versioned records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Self

from glassrag.errors import StoreError
from glassrag.schema.corpus import _Plain

CALIBRATION_VERSION = 2
RERANKER_VERSION = 2


def _version(data: Mapping[str, Any], what: str, current: int) -> int:
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= current:
        raise StoreError(f"the index's {what} is version {version!r}; this glassrag reads versions 1 to {current}",
                         "upgrade glassrag, or fit it again with this one (glassrag calibrate / rerank-train)")
    return version


def _need(data: Mapping[str, Any], what: str, keys: tuple[str, ...], again: str) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        raise StoreError(f"the index's {what} has no {', '.join(missing)}", f"fit it again: {again}")


@dataclass(frozen=True)
class Calibration(_Plain):
    """The gate's calibration: the rule and threshold it chose, the score it thresholds, the
    scoring settings it is valid for (gate/threshold.py `scoring_settings`; under any other
    the gate passes every question), the cost and `gate.score` mode it chose by, and where it
    was fitted. `separable` is false when no score told answerable from unanswerable questions
    (then it declines nothing)."""

    rule: str
    threshold: float | None
    settings: Mapping[str, Any] = field(default_factory=dict)
    score_mode: str = "auto"  # a calibration made before gate.score was recorded chose by auto
    cost: float | None = None
    separable: bool = False
    golden: str = ""
    split: str = "train"
    fit: Mapping[str, Any] = field(default_factory=dict)  # score, auroc, signals, sweep, counts, ...
    version: int = CALIBRATION_VERSION  # the version it was stored as; to_dict writes the current one

    NAMED = ("rule", "threshold", "settings", "score_mode", "cost", "separable", "golden", "split")

    def to_dict(self) -> dict[str, Any]:
        named = {"rule": self.rule, "threshold": self.threshold, "settings": dict(self.settings),
                 "score_mode": self.score_mode, "cost": self.cost, "separable": self.separable,
                 "golden": self.golden, "split": self.split}
        return {"version": CALIBRATION_VERSION, **dict(self.fit), **named}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        version = _version(data, "gate calibration", CALIBRATION_VERSION)
        _need(data, "gate calibration", ("rule",), "glassrag calibrate")
        return cls(str(data["rule"]), data.get("threshold"), dict(data.get("settings") or {}),
                   str(data.get("score_mode", "auto")), data.get("cost"), bool(data.get("separable", False)),
                   str(data.get("golden", "")), str(data.get("split", "train")),
                   {k: v for k, v in data.items() if k not in cls.NAMED and k != "version"}, version)


@dataclass(frozen=True)
class RerankerModel(_Plain):
    """The learned reranker (rerank/learned.py): a logistic regression over standardised
    features, `score = bias + Σ weight_i · (x_i − mean_i) / std_i`, its L2 penalty, the
    cross-validation that `rerank.method = auto` decides by (`cv`; None for a model trained
    before it was recorded, which auto does not use) and where it was trained."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    l2: float = 1.0
    cv: Mapping[str, Any] | None = None
    golden: str = ""
    split: str = "train"
    fit: Mapping[str, Any] = field(default_factory=dict)  # rows, positives, pool, questions, ...
    version: int = RERANKER_VERSION  # the version it was stored as; to_dict writes the current one

    NAMED = ("features", "weights", "bias", "mean", "std", "l2", "cv", "golden", "split")

    def __post_init__(self) -> None:
        sizes = {len(self.features), len(self.weights), len(self.mean), len(self.std)}
        if len(sizes) != 1:
            raise StoreError(f"the index's learned reranker has {len(self.features)} features but "
                             f"{len(self.weights)} weights, {len(self.mean)} means and {len(self.std)} deviations",
                             "train it again: glassrag rerank-train")

    def to_dict(self) -> dict[str, Any]:
        named = {"features": list(self.features), "weights": list(self.weights), "bias": self.bias,
                 "mean": list(self.mean), "std": list(self.std), "l2": self.l2, "golden": self.golden,
                 "split": self.split}
        return {"version": RERANKER_VERSION, **named, **dict(self.fit),
                **({"cv": dict(self.cv)} if self.cv is not None else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        version = _version(data, "learned reranker", RERANKER_VERSION)
        _need(data, "learned reranker", ("features", "weights", "bias", "mean", "std"), "glassrag rerank-train")
        cv = data.get("cv")
        return cls(tuple(data["features"]), tuple(data["weights"]), data["bias"], tuple(data["mean"]),
                   tuple(data["std"]), data.get("l2", 1.0), dict(cv) if cv is not None else None,
                   str(data.get("golden", "")), str(data.get("split", "train")),
                   {k: v for k, v in data.items() if k not in cls.NAMED and k != "version"}, version)


RECORDS: dict[str, type[Calibration] | type[RerankerModel]] = {"gate": Calibration, "reranker": RerankerModel}


def read_extra(extra: Mapping[str, Any]) -> dict[str, Any]:
    """An index's `extra` as stored, its calibration and reranker read through their records
    (any version) and given back in the current shape; the rest as it was."""
    out = {key: RECORDS[key].from_dict(value).to_dict() if key in RECORDS and value else value
           for key, value in extra.items()}
    if extra.get("gates"):  # calibrations kept for other settings (gate/threshold.py `fitting`)
        out["gates"] = [Calibration.from_dict(cal).to_dict() for cal in extra["gates"]]
    return out
