"""The development page: the experiment log (experiments/) as kept / kept for one set only /
trade / rejected, each with its hypothesis, the figure that decided it (the pooled paired test
of rule 2, experiment/verdict.py) and each corpus's, figures with intervals and the questions
that flipped, a chart of one metric's change across the experiments in the order they were
made, and the shared cause of the questions no configuration answers (experiment/cause.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glassrag.errors import ConfigError
from glassrag.experiment import work_folder
from glassrag.web.plots import nice_ticks

CHART_W, CHART_H, LEFT, RIGHT, TOP, BOTTOM = 720, 330, 52, 150, 16, 140
# each experiment's column is at least this wide: its name, set at 90 degrees in 11 px type, needs
# about 14 px, so neighbouring names never overlap however many experiments the log holds
MIN_STEP = 18
# an x label is an experiment's name turned on its side at 11 px: Chromium gives 5.0 px a character
# (the layout test measured 140.5 px for the 28 of answerability-hard-negatives); the room below the
# plot grows with the longest name, at 5.5 px a character
LABEL_CHAR_PX = 5.5
CORPUS_CLASSES = ("c0", "c1", "c2", "c3")
TONE = {"kept": "ok", "kept for one set only": "warn", "trade": "warn", "rejected": "bad"}


def development_view(log: Path | None, metric: str | None = None) -> dict[str, Any]:
    """The log and its evidence as plain data (the page's JSON twin)."""
    if log is None or not log.is_dir():
        return {"log": str(log) if log else None, "experiments": [], "benchmarks": [], "chart": {},
                "metrics": [], "metric": None,
                "missing": "no experiment log: start glassrag serve in the project folder, or give --log"}
    import json

    from glassrag.experiment import drift, load_all, read_evidence
    from glassrag.experiment.corpora import load_corpora
    from glassrag.experiment.verdict import RENAMED

    entries = load_all(log)
    corpora = load_corpora(log)
    experiments, benchmarks = [], []
    for e in entries:
        if not e.measured:
            verdict = RENAMED.get(e.verdict, e.verdict)
            benchmarks.append({"name": e.name, "title": e.title, "verdict": verdict, "tone": TONE[verdict],
                               "command": e.command, "results": e.results, "cites": list(e.cites),
                               "hypothesis": e.hypothesis})
            continue
        evidence = read_evidence(log, e.name)
        verdict = RENAMED.get(evidence["verdict"], evidence["verdict"]) if evidence else None
        experiments.append({
            "name": e.name, "title": e.title, "hypothesis": e.hypothesis, "notes": e.notes,
            "metric": e.metric, "also": list(e.also), "change": dict(e.change), "baseline": dict(e.baseline),
            "recorded": RENAMED.get(e.verdict, e.verdict), "verdict": verdict, "shipped": e.shipped,
            "tone": TONE.get(verdict or "", ""),
            "rule": (evidence or {}).get("rule", 1) if evidence else None,
            "decided_by": decided_by(e.metric, evidence) if evidence else None,
            "reproduced": evidence["reproduced"] if evidence else None,
            "reason": evidence["reason"] if evidence else "not measured yet",
            "corpora": _corpora(log, evidence) if evidence else [],
            "provenance": evidence.get("provenance") if evidence else None,
            # the settings moved since it was measured, in words (experiment/drift.py); "" when none did
            "moved": drift.said(drift.moved(e, evidence), mark="") if evidence else "",
        })
    metrics = sorted({m for x in experiments for c in x["corpora"] for m in c["metrics"]})
    metric = metric or (experiments[0]["metric"] if experiments else None)
    if metric and metrics and metric not in metrics:
        raise ConfigError(f"no experiment reports {metric!r}", f"choose one of: {', '.join(metrics)}")
    groups = [{"verdict": v, "tone": TONE[v], "experiments": [x for x in experiments if x["verdict"] == v]}
              for v in TONE]
    unmeasured = [x for x in experiments if x["verdict"] not in TONE]  # no evidence yet
    if unmeasured:
        groups.append({"verdict": "not measured", "tone": "", "experiments": unmeasured})
    cause_file = log / "shared-cause.json"
    cause = json.loads(cause_file.read_text(encoding="utf-8")) if cause_file.is_file() else None
    return {"log": str(log), "corpora": {n: c.title for n, c in corpora.items()}, "experiments": experiments,
            "cause": cause,
            "groups": groups, "benchmarks": benchmarks, "metrics": metrics, "metric": metric,
            "chart": effect_chart(experiments, metric, list(corpora)) if metric else {}}


def decided_by(metric: str, evidence: dict[str, Any]) -> dict[str, Any]:
    """The figures the verdict read: the pooled test of the deciding metric (rule 2; None for
    evidence decided by rule 1) and, per corpus, its difference and Holm-adjusted p."""
    per_corpus = {}
    for name, c in evidence["corpora"].items():
        m = c.get("metrics", {}).get(metric, {})
        per_corpus[name] = ({"diff": m["diff"], "p": m.get("p_holm", m["p"]), "improved": m["improved"],
                             "degraded": m["degraded"], "n": m["n"]} if m.get("measured") else None)
    return {"pooled": (evidence.get("pooled") or {}).get(metric), "corpora": per_corpus}


def _corpora(log: Path, evidence: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, c in evidence["corpora"].items():
        if "skipped" in c:
            rows.append({"corpus": name, "skipped": c["skipped"], "metrics": {}})
            continue
        # linked only where /development/runs/ serves it: the log's own work folder (an absolute
        # path in the evidence names the machine that measured it, not this one)
        here = work_folder(log) / "runs" / evidence["name"]
        runs = {side: Path(path).name for side, path in c["runs"].items() if (here / Path(path).name).is_file()}
        rows.append({"corpus": name, "metrics": c["metrics"], "flips": c["flips"], "gate": c["gate"],
                     "questions": c["questions"], "runs": runs})
    return rows


def effect_chart(experiments: list[dict[str, Any]], metric: str, corpora: list[str]) -> dict[str, Any]:
    """One column per experiment (in log order), one dot per corpus at the change's
    difference in `metric` (change - baseline), with a zero line; geometry only."""
    cols = [x for x in experiments if x["corpora"]]
    points = [(i, c["corpus"], c["metrics"][metric]) for i, x in enumerate(cols) for c in x["corpora"]
              if metric in c["metrics"] and c["metrics"][metric].get("measured")]
    if not points:
        return {}
    diffs = [m["diff"] for _, _, m in points]
    low, high = min(0.0, *diffs), max(0.0, *diffs)
    pad = (high - low) * 0.08 or 0.05
    low, high = low - pad, high + pad
    inner_w, inner_h = max(CHART_W - LEFT - RIGHT, MIN_STEP * len(cols)), CHART_H - TOP - BOTTOM
    step = inner_w / max(len(cols), 1)

    def x(i: int, corpus: str) -> float:
        k = corpora.index(corpus) if corpus in corpora else 0
        return LEFT + step * (i + 0.5) + (k - (len(corpora) - 1) / 2) * min(8.0, step / 5)

    def y(v: float) -> float:
        return TOP + (high - v) / (high - low) * inner_h

    dots = [{"x": x(i, corpus), "y": y(m["diff"]), "class": CORPUS_CLASSES[corpora.index(corpus) % 4]
             if corpus in corpora else "c0", "corpus": corpus, "experiment": cols[i]["name"],
             "label": f"{cols[i]['name']} on {corpus}: {m['diff']:+.3f} (p = {m.get('p_holm', m['p']):.2g})",
             "significant": m.get("p_holm", m["p"]) < 0.05} for i, corpus, m in points]
    below = max(BOTTOM, 8 + int(LABEL_CHAR_PX * max(len(c["name"]) for c in cols)) + 8)
    return {"width": LEFT + inner_w + RIGHT, "height": TOP + inner_h + below, "left": LEFT, "right": LEFT + inner_w,
            "top": TOP,
            "bottom": TOP + inner_h, "zero": y(0.0), "dots": dots,
            "columns": [{"x": LEFT + step * (i + 0.5), "name": c["name"], "tone": c["tone"]}
                        for i, c in enumerate(cols)],
            "y_ticks": [{"y": y(t), "label": f"{t:+g}"} for t in nice_ticks(low, high) if low <= t <= high],
            "legend": [{"name": n, "class": CORPUS_CLASSES[i % 4], "y": TOP + 14 + 20 * i}
                       for i, n in enumerate(corpora)], "legend_x": LEFT + inner_w + 14}
