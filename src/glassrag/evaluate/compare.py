"""Run against run on the same questions: each metric of the ranking and of the answer side
by side with its difference, which way is better, a paired test, Holm-corrected across the
metrics compared, the questions that flipped each way, and the settings that differ.

Each metric's `MetricSpec` (schema/metric.py) says which test and which way: exact McNemar on
0/1 outcomes (hit, top1, answer-visible, declined); a paired sign-flip randomisation test on
graded ones (MRR, nDCG, recall). Its direction says whether B's change is an improvement:
`declined_answerable` going down is.

A gate that was not calibrated for its run's settings (status `stale` or `none`,
evaluate/fits.py) passes what a calibrated one would decline: when one run's gate is such
and the other's is not, the figures after the gate are marked "not comparable" and the
comparison says why, instead of attributing the difference to the settings (when both are,
they are alike and it only says so).
"""

from __future__ import annotations

from typing import Any

from glassrag.errors import RunFileError
from glassrag.evaluate.fits import WORKING, status_of
from glassrag.evaluate.records import DENSE, dense_figures
from glassrag.stats import holm
from glassrag.schema import MCNEMAR, QuestionRecord, Run, flat_spec

__all__ = ["RunFileError", "compare_runs", "settings_changed"]
# the sections of a run measured after the gate: its calibration moves them
AFTER_THE_GATE = ("answer", "generation")


def settings_changed(a: Run, b: Run) -> list[dict[str, Any]]:
    """Every setting whose value differs between the two runs: the query-time configuration,
    and the index-time sections (chunking, analysis) of the indexes they ran on."""
    pairs = [("", a.config, b.config, None),
             ("index ", a.index.get("settings", {}), b.index.get("settings", {}), ("chunk", "analyze"))]
    rows = []
    for label, x, y, only in pairs:
        for section in sorted(set(x) | set(y)):
            if only and section not in only:
                continue
            sx, sy = x.get(section, {}), y.get(section, {})
            rows += [{"setting": f"{label}{section}.{n}", "a": sx.get(n), "b": sy.get(n)}
                     for n in sorted(set(sx) | set(sy)) if sx.get(n) != sy.get(n)]
    return rows


def gate_of(run: Run, name: str) -> dict[str, Any]:
    """A run's gate calibration status (evaluate/fits.py) with its note."""
    cal = dict(run.gate.get("calibration") or {})
    status = status_of(run.gate)
    note = cal.get("note") or ("the run file predates the record of its gate's calibration"
                               if status == "unknown" else "")
    return {"run": name, "status": status, "note": note}


def dense_metrics(run: Run) -> dict[str, Any]:
    """A dense stage's own figures, `"<stage> vector_hit"` and `"<stage> mean_top_similarity"`:
    did it return anything, and how similar was its best passage (they move when the
    embedder, its quantisation or a cutoff changes)."""
    return {f"{stage} {m}": v for stage, metrics in run.stages.items() for m, v in metrics.items()
            if m in DENSE}


def dense_question_metrics(record: QuestionRecord) -> dict[str, float]:
    """One question's figures of each dense stage, under the names of `dense_metrics`."""
    return {f"{stage} {name}": value for stage, st in record.stages.items() if st.family == "dense"
            for name, value in dense_figures(st.top_score).items()}


OFFTOPIC = "answer declined_offtopic"


def offtopic_question_metrics(run: Run) -> dict[str, dict[str, float]]:
    """Each bundled off-topic test question the run asked, {OFFTOPIC: 1.0 if declined else
    0.0}, from the ids its gate record keeps (none for a run written before it kept them)."""
    off = (run.gate or {}).get("offtopic") or {}
    answered = set(off.get("answered", []))
    return {q: {OFFTOPIC: 0.0 if q in answered else 1.0} for q in off.get("asked", [])}


def question_metrics(run: Run) -> dict[str, dict[str, float]]:
    """Every per-question figure of a run by question id: the golden set's questions' metrics
    (and their dense stages' figures), then the off-topic questions' declines, so the paired
    tests of `compare_runs` and of the experiment log cover them all."""
    out = {r.id: {**r.flat_metrics(), **dense_question_metrics(r)} for r in run.questions}
    return {**out, **offtopic_question_metrics(run)}


def compare_runs(a: dict[str, Any] | Run, b: dict[str, Any] | Run, name_a: str = "A",
                 name_b: str = "B") -> dict[str, Any]:
    run_a = a if isinstance(a, Run) else Run.from_dict(a, name_a)
    run_b = b if isinstance(b, Run) else Run.from_dict(b, name_b)
    golden = {r.id for r in run_a.questions} & {r.id for r in run_b.questions}
    if not golden:
        raise RunFileError(f"{name_a} and {name_b} share no question", "compare runs of the same golden set")
    qa, qb = question_metrics(run_a), question_metrics(run_b)
    common = [q for q in qa if q in qb]
    ma, mb = {**run_a.flat_metrics(), **dense_metrics(run_a)}, {**run_b.flat_metrics(), **dense_metrics(run_b)}
    names = [m for m in ma if m in mb]
    rows = []
    flips: dict[str, dict[str, list[str]]] = {}
    for m in names:
        ids = [q for q in common if m in qa[q] and m in qb[q]]
        if not ids:
            continue
        x = [float(qa[q][m]) for q in ids]
        y = [float(qb[q][m]) for q in ids]
        mean_a, mean_b = sum(x) / len(x), sum(y) / len(y)
        spec = flat_spec(m)
        sign = 1.0 if spec.better == "higher" else -1.0
        improved = [q for q, u, v in zip(ids, x, y) if sign * (v - u) > 0]
        degraded = [q for q, u, v in zip(ids, x, y) if sign * (v - u) < 0]
        test = spec.paired_test
        p = spec.paired_p(len(improved), len(degraded), x, y)
        if test == MCNEMAR:
            flips[m] = {"improved": improved, "degraded": degraded}
        diff = mean_b - mean_a
        rows.append({"metric": m, "section": m.split(" ")[0], "better": spec.better,
                     "a": mean_a, "b": mean_b, "diff": diff,
                     "direction": "UP" if diff > 1e-12 else "DOWN" if diff < -1e-12 else "=",
                     "verdict": ("better" if sign * diff > 1e-12 else "worse" if sign * diff < -1e-12
                                 else "same"),
                     "p": p, "test": test, "n": len(ids),
                     "improved": len(improved), "degraded": len(degraded)})
    for row, adjusted in zip(rows, holm([r["p"] for r in rows])):
        row["p_holm"] = adjusted
    gates = {"a": gate_of(run_a, name_a), "b": gate_of(run_b, name_b)}
    unfit = [g for g in gates.values() if g["status"] not in WORKING and g["status"] != "unknown"]
    why = "; ".join(f"{g['run']}'s gate was {g['status']}" for g in unfit)
    warning = None
    if len(unfit) == 2:  # alike: both decline only what matches nothing
        warning = (f"{why}: neither gate was calibrated for its run's settings, so the figures after the gate "
                   "are those of gates that decline only questions matching nothing")
    elif unfit:
        warning = (f"{why}: the figures after the gate (answer, generation) differ because a gate was not "
                   "calibrated for its run's settings, not necessarily because of the settings; calibrate each "
                   "(glassrag eval calibrates on the train split unless --no-calibrate; glassrag calibrate "
                   "--config FILE saves it) and compare again")
        for row in rows:
            if row["section"] in AFTER_THE_GATE:
                row["verdict"] = "not comparable"
                row["confounded"] = why
        for m in list(flips):
            if m.split(" ")[0] in AFTER_THE_GATE:
                flips[m] = {**flips[m], "confounded": why}
    return {"a": name_a, "b": name_b, "questions": len(golden), "rows": rows, "flips": flips,
            "gates": gates, "gate_warning": warning,
            "stages": {"a": {"ranking": run_a.ranking.stage, "answer": run_a.answer.stage},
                       "b": {"ranking": run_b.ranking.stage, "answer": run_b.answer.stage}},
            "settings": settings_changed(run_a, run_b)}
