"""Experiments as part of the tool: the log of changes tried (`experiments/*.toml`, log.py),
the corpora they are measured on (corpora.py), the measurement and its verdict rule
(measure.py), and docs/measurements.md generated from the log and its evidence (report.py).

Evidence: `experiments/results/NAME.json` (committed: figures, paired tests, flipped
questions, provenance); the run files behind it stay in `.glassrag/experiments/runs/`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from glassrag.experiment.corpora import load_corpora
from glassrag.experiment.log import Experiment, find, load, load_all
from glassrag.experiment.measure import Measurer
from glassrag.experiment.verdict import decide

__all__ = ["Experiment", "decide", "evidence_path", "find", "load", "load_all", "read_evidence",
           "redecided", "run_experiments", "work_folder", "write_evidence"]


def work_folder(log: Path) -> Path:
    """Where indexes, embedding caches and run files of experiments are kept."""
    return log.resolve().parent / ".glassrag" / "experiments"


def evidence_path(log: Path, name: str) -> Path:
    return log / "results" / f"{name}.json"


def read_evidence(log: Path, name: str) -> dict[str, Any] | None:
    path = evidence_path(log, name)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def run_experiments(log: Path, experiments: list[Experiment],
                    progress: Callable[[str], None] | None = None,
                    only: list[str] | None = None,
                    steps: Callable[[str, int, int], None] | None = None) -> list[dict[str, Any]]:
    """Measure each experiment and write its evidence (atomically, one file each); with
    `only`, measure those corpora and keep the others' figures from the last evidence.
    `progress(message)` hears each run begin, `steps(what, done, total)` its questions."""
    work = work_folder(log)
    measurer = Measurer(work, load_corpora(log), work / "runs", progress, steps)
    results = []
    for experiment in experiments:
        evidence = measurer.measure(experiment, only, read_evidence(log, experiment.name) if only else None)
        write_evidence(log, evidence)
        results.append(evidence)
    return results


def write_evidence(log: Path, evidence: dict[str, Any]) -> Path:
    """Write `evidence` to experiments/results/NAME.json atomically (a temp file renamed)."""
    target = evidence_path(log, evidence["name"])
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(evidence, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(target)
    return target


def redecided(experiment: Experiment, evidence: dict[str, Any]) -> dict[str, Any]:
    """A copy of `evidence` decided again by the current rule (verdict.py) from its own
    per-question figures, nothing re-run; evidence without them (written before rule 2)
    raises ConfigError, since only re-running it can give them."""
    from glassrag.errors import ConfigError
    from glassrag.experiment import verdict as rule

    measured = [c for c in evidence["corpora"].values() if "skipped" not in c]
    if not measured or not all("per_question" in c for c in measured):
        raise ConfigError(f"{experiment.name}: its evidence has no per-question figures (written before "
                          f"rule {rule.RULE})", f"re-run it: glassrag experiment run {experiment.name}")
    verdict, reason, tests = rule.decide(evidence["metric"], evidence["also"], evidence["corpora"])
    return {**evidence, "rule": rule.RULE, "verdict": verdict, "reason": reason, "pooled": tests["pooled"],
            "shipped": experiment.shipped, "expected": experiment.verdict,
            "reproduced": verdict == experiment.verdict and not any("skipped" in c for c in evidence["corpora"].values())}
