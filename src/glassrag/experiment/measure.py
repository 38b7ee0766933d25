"""Measure one experiment of the log: on each of its corpora, the baseline and the change
are each fitted on the train split (reranker, gate) and evaluated once on the test split;
every metric is compared question by question (evaluate/compare.py: exact McNemar on 0/1
outcomes, paired randomisation on graded ones), the per-question figures are kept in the
evidence, and the verdict follows rule 2 (verdict.py: a pooled paired test over the corpora).

Evidence written before rule 2 has no per-question figures; `decide_rule1` is the rule it
was decided by (per corpus, Holm across corpora), so it stays readable and checkable:

- kept: the metric is better on at least two corpora (or on the only one measured), worse
  on none, and no `also` metric is worse;
- one corpus only: better on exactly one of several corpora, worse on none, nothing worse;
- trade: better somewhere and worse elsewhere, or one of the two (metric, `also`) better
  while the other is worse;
- rejected: everything else: no difference that survives the test, or only losses.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Iterator

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.compare import compare_runs, question_metrics
from glassrag.stats import holm
from glassrag.evaluate.workbench import Steps, Workbench
from glassrag.experiment.corpora import Corpus, workbench
from glassrag.experiment import verdict as verdict_rule
from glassrag.experiment.drift import flat
from glassrag.experiment.log import Experiment
from glassrag.provenance import provenance
from glassrag.schema import Run

ALPHA = 0.05


class Measurer:
    """Runs experiments on one workbench per corpus (experiment/corpora.py `workbench`, under
    the work folder `work`), evaluating each configuration once per corpus (a baseline shared
    by several experiments is run once)."""

    def __init__(self, work: Path, corpora: dict[str, Corpus], runs: Path,
                 progress: Callable[[str], None] | None = None, steps: Steps | None = None) -> None:
        self.work, self.corpora, self.runs = work, corpora, runs
        self.progress = progress or (lambda message: None)
        self.steps = steps  # each workbench's (what, done, total) as it builds, fits and evaluates
        self._workbenches: dict[str, Workbench] = {}

    def workbench(self, corpus: Corpus) -> Workbench:
        """The corpus's workbench, made once."""
        if corpus.name not in self._workbenches:
            self._workbenches[corpus.name] = workbench(corpus, self.work)
            self._workbenches[corpus.name].steps = self.steps
        return self._workbenches[corpus.name]

    def run(self, corpus: Corpus, config: Config, split: str) -> Run:
        return self.workbench(corpus).run(config, split)

    def measure(self, experiment: Experiment, only: list[str] | None = None,
                before: dict[str, Any] | None = None) -> dict[str, Any]:
        """The evidence of `experiment`; with `only`, just those corpora are measured and the
        others are kept from `before` (the evidence written last), each corpus with the
        provenance of the run that measured it, and the verdict decided over all of them."""
        self.check(experiment)
        started = time.perf_counter()
        baseline, changed = experiment.configs()
        per_corpus: dict[str, Any] = {}
        seeds = {"lsa.seed": baseline.lsa.seed, "bootstrap": 0, "randomisation": 0}
        for name in experiment.corpora:
            kept = kept_figures(name, only, before)
            if kept is not None:
                per_corpus[name] = {"provenance": (before or {}).get("provenance"), **kept}
                continue
            corpus = self.corpora[name]
            missing = corpus.missing()
            if missing:
                per_corpus[name] = {"skipped": missing}
                continue
            self.progress(f"{experiment.name}: {name} baseline")
            a = self.run(corpus, baseline, experiment.split)
            self.progress(f"{experiment.name}: {name} change")
            b = self.run(corpus, changed, experiment.split)
            per_corpus[name] = {**self._corpus(experiment, name, a, b), "provenance": provenance(seeds)}
        per_corpus = with_holm(experiment, per_corpus)
        verdict, reason, tests = verdict_rule.decide(experiment.metric, experiment.also, per_corpus)
        return {"name": experiment.name, "title": experiment.title, "metric": experiment.metric,
                "also": list(experiment.also), "split": experiment.split, "rule": verdict_rule.RULE,
                "pooled": tests["pooled"], "shipped": experiment.shipped,
                "baseline": dict(experiment.baseline), "change": dict(experiment.change),
                "verdict": verdict, "reason": reason, "expected": experiment.verdict,
                "reproduced": verdict == experiment.verdict and not any(
                    "skipped" in c for c in per_corpus.values()),
                "corpora": per_corpus, "seconds": round(time.perf_counter() - started, 1),
                "provenance": provenance(seeds)}

    def check(self, experiment: Experiment) -> None:
        """ConfigError unless `experiment` is an A/B experiment on corpora this log knows."""
        if not experiment.measured:
            raise ConfigError(f"{experiment.name} is a benchmark's entry, not an experiment",
                              f"reproduce it with: {experiment.command}")
        unknown = [c for c in experiment.corpora if c not in self.corpora]
        if unknown:
            raise ConfigError(f"{experiment.name}: unknown corpus {unknown}",
                              f"experiments/corpora.toml has: {', '.join(self.corpora)}")

    def _corpus(self, experiment: Experiment, name: str, a: Run, b: Run) -> dict[str, Any]:
        from glassrag.evaluate.runs import write_run_file

        folder = self.runs / experiment.name
        paths = {}
        for side, run in (("baseline", a), ("change", b)):
            paths[side] = folder / f"{name}-{side}.json"
            write_run_file(run, paths[side])
        compared = compare_runs(a, b, "baseline", "change")
        rows = {r["metric"]: r for r in compared["rows"]}
        ma, mb = a.flat_metrics(), b.flat_metrics()
        metrics = {}
        for m in (experiment.metric, *experiment.also):
            if m not in rows or ma.get(m, {}).get("value") is None:
                metrics[m] = {"measured": False}
                continue
            r = rows[m]
            metrics[m] = {"measured": True, "baseline": _value(ma[m]), "change": _value(mb[m]),
                          "diff": r["diff"], "better": r["better"], "p": r["p"], "test": r["test"],
                          "n": r["n"], "improved": r["improved"], "degraded": r["degraded"]}
        flips = compared["flips"].get(experiment.metric, {})
        return {"questions": compared["questions"], "metrics": metrics,
                "per_question": paired_outcomes(a, b, [m for m in metrics if metrics[m]["measured"]]),
                "flips": {"improved": flips.get("improved", []), "degraded": flips.get("degraded", [])},
                "gate": {"baseline": _gate(a), "change": _gate(b)},
                "ranking_stage": {"baseline": a.ranking.stage, "change": b.ranking.stage},
                "settings": compared["settings"],
                # every setting the baseline ran with: a later default that moves shows (drift.py)
                "baseline_settings": flat(a.config),
                "runs": {side: str(p) for side, p in paths.items()}}


def kept_figures(corpus: str, only: list[str] | None, before: dict[str, Any] | None) -> dict[str, Any] | None:
    """The figures of `corpus` kept from `before` (the evidence written last) when `only` names
    other corpora, else None (the corpus is measured now)."""
    kept = (before or {}).get("corpora", {}).get(corpus)
    return kept if only is not None and corpus not in only and kept is not None else None


def paired_outcomes(a: Run, b: Run, metrics: list[str]) -> dict[str, dict[str, list[Any]]]:
    """Each metric's per-question figures on the questions both runs measured it on (the
    paired test's input, compare_runs' ids): {"ids": [...], "baseline": [...], "change": [...]},
    so a verdict can be recomputed from the evidence alone."""
    qa, qb = question_metrics(a), question_metrics(b)
    out = {}
    for m in metrics:
        ids = [q for q in qa if q in qb and m in qa[q] and m in qb[q]]
        out[m] = {"ids": ids, "baseline": [float(qa[q][m]) for q in ids], "change": [float(qb[q][m]) for q in ids]}
    return out


def metric_rows(evidence: dict[str, Any]) -> Iterator[tuple[str, str | None, dict[str, Any] | None, str]]:
    """(corpus, metric, its figures, why not) for each corpus and metric of the evidence: figures
    None and a reason when the corpus was skipped (metric None) or the metric not measured."""
    for corpus, c in evidence["corpora"].items():
        if "skipped" in c:
            yield corpus, None, None, f"skipped: {c['skipped']}"
            continue
        for metric, m in c["metrics"].items():
            yield (corpus, metric, m, "") if m["measured"] else (corpus, metric, None, "not measured here")


def _value(m: dict[str, Any]) -> dict[str, Any]:
    return {k: m.get(k) for k in ("value", "low", "high", "n")}


def _gate(run: Run) -> dict[str, Any]:
    """What the gate was calibrated to: its score and threshold (scores shift with models)."""
    params = run.gate.get("params", {}) or {}
    return {"score": params.get("score"), "threshold": params.get("threshold"),
            "separable": params.get("separable")}


def with_holm(experiment: Experiment, per_corpus: dict[str, Any]) -> dict[str, Any]:
    """A copy of `per_corpus` whose measured metric rows carry `p_holm`, the Holm-adjusted p:
    the experiment's metric over the corpora, its `also` metrics over every (corpus, metric)
    pair. The evidence keeps it beside the raw p; `decide` reads it."""
    out = {c: ({**v, "metrics": {m: dict(row) for m, row in v["metrics"].items()}} if "metrics" in v else v)
           for c, v in per_corpus.items()}
    for family in ((experiment.metric,), experiment.also):
        rows = [v["metrics"][m] for v in out.values() if "metrics" in v for m in family
                if v["metrics"][m].get("measured")]
        for row, p in zip(rows, holm([row["p"] for row in rows])):
            row["p_holm"] = p
    return out


def decide_rule1(experiment: Experiment, per_corpus: dict[str, Any]) -> tuple[str, str]:
    """The verdict and its reason by rule 1 (this module's docstring), from evidence
    whose p-values `with_holm` adjusted."""
    measured = {c: v["metrics"][experiment.metric] for c, v in per_corpus.items()
                if "metrics" in v and v["metrics"][experiment.metric].get("measured")}
    if not measured:
        return "rejected", f"{experiment.metric} could not be measured on any corpus"
    names = list(measured)
    better = [c for c in names if measured[c]["p_holm"] < ALPHA and _sign(measured[c]) > 0]
    worse = [c for c in names if measured[c]["p_holm"] < ALPHA and _sign(measured[c]) < 0]
    others = [(c, m, v["metrics"][m]) for c, v in per_corpus.items() if "metrics" in v
              for m in experiment.also if v["metrics"][m].get("measured")]
    also_better = [f"{m} on {c}" for c, m, row in others if row["p_holm"] < ALPHA and _sign(row) > 0]
    also_worse = [f"{m} on {c}" for c, m, row in others if row["p_holm"] < ALPHA and _sign(row) < 0]

    def said(cs: list[str]) -> str:
        return ", ".join(f"{c} ({measured[c]['diff']:+.3f}, p = {measured[c]['p_holm']:.3g})" for c in cs)

    m = experiment.metric
    verdict, reason = _rule(m, names, better, worse, also_better, also_worse, said, measured)
    moved = [f"{', '.join(xs)} {word}" for xs, word in ((also_better, "better"), (also_worse, "worse"))
             if xs and ", ".join(xs) not in reason]
    return verdict, reason + (f"; also: {'; '.join(moved)}" if moved else "")


def _rule(m: str, names: list[str], better: list[str], worse: list[str], also_better: list[str],
          also_worse: list[str], said: Callable[[list[str]], str],
          measured: dict[str, Any]) -> tuple[str, str]:
    if better and not worse and not also_worse:
        if len(better) >= 2 or len(names) == 1:
            return "kept", f"{m} better on {said(better)}; worse nowhere"
        return "one corpus only", f"{m} better on {said(better)} only; no difference elsewhere"
    if better and (worse or also_worse):
        return "trade", (f"{m} better on {said(better)} but "
                         + "; ".join(filter(None, [f"{m} worse on {said(worse)}" if worse else "",
                                                   ", ".join(also_worse)])) + " worse")
    if worse and also_better:
        return "trade", f"{m} worse on {said(worse)}; {', '.join(also_better)} better"
    if worse:
        return "rejected", f"{m} worse on {said(worse)}"
    diffs = ", ".join(f"{c} {measured[c]['diff']:+.3f} (p = {measured[c]['p_holm']:.2g})" for c in names)
    return "rejected", f"no difference in {m} survives the paired test: {diffs}"


def _sign(row: dict[str, Any]) -> int:
    """+1 when the change is an improvement (the metric's direction), -1 when it is worse."""
    d = row["diff"] if row["better"] == "higher" else -row["diff"]
    return 1 if d > 1e-12 else -1 if d < -1e-12 else 0
