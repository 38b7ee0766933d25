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

from glassrag.experiment.corpora import Bench, load_corpora
from glassrag.experiment.log import Experiment, find, load, load_all
from glassrag.experiment.measure import Measurer, decide

__all__ = ["Experiment", "decide", "evidence_path", "find", "load", "load_all", "read_evidence",
           "run_experiments", "work_folder"]


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
                    only: list[str] | None = None) -> list[dict[str, Any]]:
    """Measure each experiment and write its evidence (atomically, one file each); with
    `only`, measure those corpora and keep the others' figures from the last evidence."""
    work = work_folder(log)
    measurer = Measurer(Bench(work), load_corpora(log), work / "runs", progress)
    results = []
    for experiment in experiments:
        evidence = measurer.measure(experiment, only, read_evidence(log, experiment.name) if only else None)
        target = evidence_path(log, experiment.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(json.dumps(evidence, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        tmp.replace(target)
        results.append(evidence)
    return results
