"""Does the gate's calibration fit the settings a question is run with, and what to do when
it does not (issue 27, item 4). A calibration is valid only for the scoring settings, rule
and cost it was made with (gate/threshold.py); under other settings the gate passes every
question, so an evaluation or a comparison under them would silently measure a gate that
is switched off. `eval` calibrates such a configuration on the train split (not saved),
as a sweep does, or says loudly that it did not; every run records which (`gate.calibration`).

Status of a run's gate:
- `index`: the index's calibration fits these settings;
- `train`: calibrated here, on the golden set's train split, for these settings;
- `stale`: the index's calibration was made for other settings and was not redone: the gate
  passed every question that matched anything;
- `none`: the index was never calibrated: the gate declined only what matched nothing;
- `off`: `gate.enabled = false` in these settings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Sequence

from glassrag.config import Config
from glassrag.evaluate.golden import Question
from glassrag.gate.calibrate import COMBINED
from glassrag.gate.threshold import changed, fitting, offtopic_keep
from glassrag.pipeline import Pipeline
from glassrag.schema.fitted import Calibration
from glassrag.store.base import Index

WORKING = ("index", "train", "off")  # a gate whose figures belong to its settings


def mismatch(index: Index, config: Config) -> list[str]:
    """Why the index's calibration does not fit `config` (empty when it does, or when there
    is none): each changed scoring setting, a rule, cost or score other than the one it chose
    by, and whether the bundled off-topic questions were among its unanswerable ones."""
    if not index.extra.get("gate"):
        return []
    settings = calibration_settings(index, config)
    # the calibration kept for these settings, else the index's current one (gate/threshold.py)
    cal = Calibration.from_dict(fitting(index.extra, settings))  # any stored version (schema/fitted.py)
    out = changed(dict(cal.settings), settings)
    if cal.rule != config.gate.rule:
        out.append(f"gate.rule was {cal.rule!r}, now {config.gate.rule!r}")
    elif config.gate.rule == "cost" and cal.cost != config.gate.cost:
        out.append(f"gate.cost was {cal.cost}, now {config.gate.cost}")
    if cal.score_mode != config.gate.score:
        out.append(f"gate.score was {cal.score_mode!r}, now {config.gate.score!r}")
    made_with = cal.fit.get("on_topic_min")  # not recorded before gate.on_topic_min existed
    if made_with is not None and made_with != config.gate.on_topic_min:
        out.append(f"gate.on_topic_min was {made_with}, now {config.gate.on_topic_min}")
    read = cal.fit.get("combined_signals", list(COMBINED))  # not recorded before gate.signals existed
    if list(read) != list(config.gate.signals):
        out.append(f"gate.signals was {list(read)}, now {list(config.gate.signals)}")
    if offtopic_keep(cal.fit) != config.gate.offtopic_keep:
        out.append(f"gate.offtopic_keep was {offtopic_keep(cal.fit)}, now {config.gate.offtopic_keep}")
    asked = (cal.fit.get("questions") or {}).get("offtopic")  # bundled off-topic questions it was made with
    if asked is not None and bool(asked) != config.gate.offtopic:
        out.append(f"gate.offtopic was {str(bool(asked)).lower()}, now {str(config.gate.offtopic).lower()}")
    return out


def calibration_settings(index: Index, config: Config) -> dict[str, Any]:
    """The scoring settings a calibration made for `config` on `index` is valid for
    (gate/threshold.py `scoring_settings`: they do not depend on whether the gate is on)."""
    return Pipeline(index, replace(config, gate=replace(config.gate, enabled=False))).scoring_settings()


def calibrated_for(index: Index, config: Config, questions: Sequence[Question], golden: str,
                   progress: Callable[[int, int], None] | None = None) -> tuple[Index, str | None]:
    """The index to evaluate `config` on: when the index's calibration does not fit, a copy
    whose gate and reader are calibrated on the train split of `questions` for `config`
    (nothing is saved), else the index itself; and why calibrating failed (no unanswerable
    train question, say), when it did."""
    from glassrag.errors import ConfigError
    from glassrag.evaluate.tune import calibrate_index

    if not config.gate.enabled or not index.extra.get("gate") or not mismatch(index, config):
        return index, None
    try:
        gate, reader = calibrate_index(index, config, questions, config.gate.rule, golden, progress)
    except ConfigError as e:
        return index, f"calibrating for these settings failed: {e.problem}"
    gate["fitted_here"] = golden
    return replace(index, extra={**index.extra, "gate": gate, "reader": reader}), None


def calibration_record(pipeline: Pipeline) -> dict[str, Any]:
    """What a run stores of its gate's calibration: its status (above), what changed and a
    sentence that says it."""
    gate, config = pipeline.gate, pipeline.config
    if not config.gate.enabled:
        return {"status": "off", "note": "gate.enabled = false in these settings"}
    cal = gate.calibration
    if not cal:
        return {"status": "none", "note": "the index was never calibrated (glassrag calibrate), so the gate "
                                          "declined only questions that matched nothing"}
    if gate.stale:
        return {"status": "stale", "changed": list(gate.stale),
                "note": "the gate was OFF: the index's calibration was made for other settings ("
                        + "; ".join(gate.stale[:4]) + (f"; and {len(gate.stale) - 4} more" if len(gate.stale) > 4
                                                       else "")
                        + "), so every question that matched anything passed"}
    if cal.get("fitted_here"):
        return {"status": "train", "note": "the index's calibration was made for other settings, so the gate "
                                           "and the reader were calibrated for these on the train split of "
                                           f"{cal['fitted_here']} (not saved in the index; glassrag calibrate "
                                           "--config FILE saves it)"}
    return {"status": "index", "note": "the index's calibration fits these settings"}


def status_of(gate: dict[str, Any]) -> str:
    """A run's gate status; run files written before it was recorded: `index` when the gate
    had a threshold, else `unknown`."""
    cal = gate.get("calibration")
    if cal:
        return str(cal.get("status"))
    return "index" if (gate.get("params") or {}).get("threshold") is not None else "unknown"
