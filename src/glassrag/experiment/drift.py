"""Has the baseline moved since an experiment was measured? An entry whose baseline is "the
defaults" compares against whatever the defaults were when it ran: once a later change ships
(a new gate signal, another k1), the same entry run again compares against something else,
and its recorded figures no longer describe today's pipeline.

Evidence records, for each corpus, every setting of the baseline run (`baseline_settings`,
"section.name" → value, from the run's own configuration); `moved` compares them with the
baseline the entry gets today. Evidence written before the settings were recorded says
nothing either way (`unrecorded`).

    moved(experiment, evidence)   # {"demo": [("gate.signals", then, now)], ...}
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from glassrag.config import SETTINGS
from glassrag.experiment.log import Experiment


# the sections of the stages after the ranking the ranking metrics are measured on
# (evaluate/runs.py: the last ranking stage before the gate)
AFTER_RANKING = ("gate", "answer", "generate")


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value))  # settings are TOML's values: JSON holds every one


# what each setting added after the behaviour it names did before it existed (its definition's
# `before`), as evidence holds it
BEFORE = {name: _json(s.before) for name, s in SETTINGS.items() if s.before is not None}


def flat(config: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """{"section.name": value} of a configuration's sections, each value as JSON holds it
    (a tuple becomes a list), so recorded and current settings compare equal when they are."""
    out: dict[str, Any] = _json({f"{s}.{k}": v for s, values in config.items() for k, v in values.items()})
    return out


def moved(experiment: Experiment, evidence: Mapping[str, Any]) -> dict[str, list[tuple[str, Any, Any]]]:
    """corpus → [(setting, value then, value now)] for each corpus whose recorded baseline
    differs from the baseline `experiment` gets today. A setting added since ran, then, as its
    definition's `before` says (gate.signals: the five signals before the margin), else as its
    default (a new stage off by default does what glassrag did without it); a setting removed
    since is not counted, nor, for an entry decided and reported on ranking metrics alone, a
    setting of the stages after the ranking (AFTER_RANKING: they cannot move a ranking figure).
    Corpora that match, were skipped, or have no recorded settings are absent."""
    now = flat(experiment.configs()[0].to_dict())
    if all(m.startswith("ranking ") for m in (experiment.metric, *experiment.also)):
        now = {name: v for name, v in now.items() if name.split(".")[0] not in AFTER_RANKING}
    out = {}
    for corpus, c in evidence["corpora"].items():
        recorded = c.get("baseline_settings")
        if not recorded:
            continue
        then = {name: recorded.get(name, BEFORE.get(name, now[name])) for name in now}
        diffs = [(name, then[name], now[name]) for name in sorted(now) if then[name] != now[name]]
        if diffs:
            out[corpus] = diffs
    return out


def unrecorded(evidence: Mapping[str, Any]) -> list[str]:
    """The measured corpora of `evidence` whose baseline settings were not recorded."""
    return [corpus for corpus, c in evidence["corpora"].items()
            if "skipped" not in c and not c.get("baseline_settings")]


def said(changes: Mapping[str, list[tuple[str, Any, Any]]], mark: str = "`") -> str:
    """One line for people: each moved setting (between `mark`s: Markdown's code), then → now,
    and the corpora it moved on."""
    by_setting: dict[tuple[str, str, str], list[str]] = {}
    for corpus, diffs in changes.items():
        for name, then, now in diffs:
            by_setting.setdefault((name, _text(then), _text(now)), []).append(corpus)
    return "; ".join(f"{mark}{name}{mark} {then} → {now} ({', '.join(corpora)})"
                     for (name, then, now), corpora in by_setting.items())


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
