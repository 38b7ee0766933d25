"""What a workbench (evaluate/workbench.py) fits on the train split for a configuration, and
when: the learned reranker, and the gate's and reader's calibration (evaluate/tune.py fits
them). A calibration is valid only for the settings it was made with (gate/threshold.py), so
a configuration whose settings it does not fit (evaluate/fits.py `mismatch`) is calibrated
again, or its gate would pass every question.

The sweep and the experiment log chose differently before they shared one core, and each
keeps its choice as a `Fitting`, so that no figure either has measured moves:

- `SWEEP`: an index is fitted once, like `glassrag demo` fits it; each configuration its
  calibration does not fit is calibrated for on train (kept per settings), and an index that
  was never calibrated stays so ("none");
- `EXPERIMENT`: each configuration is fitted for itself: a reranker trained when its
  rerank.method is auto or learned, the gate calibrated when it is enabled and the train
  split has unanswerable questions to calibrate it on;
- `AS_BUILT`: the index as it is (the lab; `glassrag sweep --no-calibrate`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.evaluate.fits import calibration_settings, mismatch
from glassrag.evaluate.golden import Question
from glassrag.evaluate.variant import Variant
from glassrag.stage_cache import digest
from glassrag.store.base import Index

LEARNED = ("auto", "learned")  # the rerank methods that read a trained model


@dataclass(frozen=True)
class Fitting:
    """`reranker`: "index" (the index's own) or "config" (one trained for each configuration
    whose rerank.method is in LEARNED). `gate`: "index" (the index's calibration as it is),
    "refit" (the index's where it fits, else one made for the configuration; none where the
    index has none) or "config" (for each configuration with gate.enabled whose train split
    has unanswerable questions: the index's where it fits, else one made for it)."""

    reranker: str = "index"
    gate: str = "refit"

    def __post_init__(self) -> None:
        if self.reranker not in ("index", "config") or self.gate not in ("index", "refit", "config"):
            raise ValueError(f"no such fitting: reranker {self.reranker!r}, gate {self.gate!r}")


SWEEP = Fitting("index", "refit")
EXPERIMENT = Fitting("config", "config")
AS_BUILT = Fitting("index", "index")


def inherited(base: Index, index: Index, config: Config, questions: Sequence[Question],
              golden: str) -> dict[str, Any]:
    """What a newly built `index` is fitted with because `base` has it, as `glassrag demo`
    fits an index: the learned reranker, then the gate and reader, on the train split."""
    from glassrag.evaluate.tune import calibrate_index, train_reranker

    made: dict[str, Any] = {}
    if base.extra.get("reranker"):
        made["reranker"] = train_reranker(index, config, questions, golden)
    if base.extra.get("gate"):  # calibrated with the reranker just trained
        made["gate"], made["reader"] = calibrate_index(replace(index, extra={**index.extra, **made}), config,
                                                       questions, config.gate.rule, golden)
    return made


Progress = Callable[[int, int], None]  # questions done, of how many


def reranked(fitting: Fitting, variant: Variant, config: Config, questions: Sequence[Question],
             golden: str, progress: Progress | None = None) -> Index:
    """The variant's index, with a reranker trained for `config` when the fitting says so."""
    from glassrag.evaluate.tune import train_reranker

    index = variant.index
    if fitting.reranker != "config" or config.rerank.method not in LEARNED:
        return index
    model = train_reranker(index, config, questions, golden, progress, cache=variant.cache)
    return replace(index, extra={**index.extra, "reranker": model})


def calibrated(fitting: Fitting, variant: Variant, index: Index, config: Config,
               questions: Sequence[Question], golden: str, progress: Progress | None = None) -> tuple[Index, str]:
    """`index` with a gate and reader calibrated for `config` where the fitting asks for one
    and its own does not fit, and how: "index" (its own), "train" (made here, on the train
    split) or "none" (it has none and none was asked for)."""
    own = bool(index.extra.get("gate"))
    if fitting.gate == "index":
        return index, "index"
    if fitting.gate == "refit" and not own:
        return index, "none"
    if fitting.gate == "config" and not (config.gate.enabled and _calibratable(questions)):
        return index, "index" if own else "none"
    if own and not mismatch(index, config):
        return index, "index"
    if fitting.gate == "config":  # the index (its reranker) is this configuration's own
        return _calibrated(variant, index, config, questions, golden, progress), "train"
    key = digest(calibration_settings(index, config), config.gate.rule, config.gate.cost, config.gate.score,
                 config.gate.offtopic_keep, config.answer.budget_words)
    if key not in variant.calibrations:
        variant.calibrations[key] = _calibrated(variant, index, config, questions, golden, progress)
    return variant.calibrations[key], "train"


def _calibratable(questions: Sequence[Question]) -> bool:
    """Whether the train split has unanswerable questions to calibrate a gate on (plain
    SciFact has none: like a user's index that was never calibrated)."""
    return any(not q.answerable for q in questions if q.split == "train")


def _calibrated(variant: Variant, index: Index, config: Config, questions: Sequence[Question],
                golden: str, progress: Progress | None = None) -> Index:
    from glassrag.evaluate.tune import calibrate_index

    gate, reader = calibrate_index(index, config, questions, config.gate.rule, golden, progress,
                                   cache=variant.cache, judge=variant.judge)
    return replace(index, extra={**index.extra, "gate": gate, "reader": reader})
