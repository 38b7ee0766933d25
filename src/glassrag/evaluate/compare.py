"""Run against run on the same questions: each metric side by side with its difference,
the direction, a paired test, Holm-corrected across the metrics compared, and the
questions that flipped each way.

Tests: exact McNemar on 0/1 outcomes (hit, top1, answer-visible, declined); a paired
sign-flip randomisation test on graded ones (MRR, nDCG, recall).
"""

from __future__ import annotations

from typing import Any

from glassrag.errors import GlassragError
from glassrag.evaluate.runs import BINARY, RUN_FORMAT_VERSION
from glassrag.evaluate.stats import holm, mcnemar_exact, paired_randomization


class RunFileError(GlassragError):
    exit_code = 4


def check_run(run: dict[str, Any], name: str) -> None:
    if run.get("format") != "glassrag-run":
        raise RunFileError(f"{name} is not a glassrag run file", "make one with glassrag eval --out FILE")
    if run.get("format_version") != RUN_FORMAT_VERSION:
        raise RunFileError(
            f"{name} is run format {run.get('format_version')} (glassrag {run.get('glassrag_version')}); "
            f"this glassrag compares format {RUN_FORMAT_VERSION}",
            "re-run glassrag eval with this version on both configurations")


def _binary(name: str) -> bool:
    return name.split("@")[0] in BINARY or name.startswith("declined")


def compare_runs(a: dict[str, Any], b: dict[str, Any], name_a: str = "A",
                 name_b: str = "B") -> dict[str, Any]:
    check_run(a, name_a)
    check_run(b, name_b)
    qa = {r["id"]: r for r in a["questions"]}
    qb = {r["id"]: r for r in b["questions"]}
    common = [q for q in qa if q in qb]
    if not common:
        raise RunFileError(f"{name_a} and {name_b} share no question", "compare runs of the same golden set")
    names = [m for m in a["metrics"] if m in b["metrics"]]
    rows = []
    flips: dict[str, dict[str, list[str]]] = {}
    for m in names:
        ids = [q for q in common if m in qa[q].get("metrics", {}) and m in qb[q].get("metrics", {})]
        if not ids:
            continue
        x = [float(qa[q]["metrics"][m]) for q in ids]
        y = [float(qb[q]["metrics"][m]) for q in ids]
        mean_a, mean_b = sum(x) / len(x), sum(y) / len(y)
        if _binary(m):
            better = [q for q, u, v in zip(ids, x, y) if v > u]
            worse = [q for q, u, v in zip(ids, x, y) if v < u]
            p = mcnemar_exact(len(better), len(worse))
            flips[m] = {"improved": better, "degraded": worse}
            test = "McNemar exact"
        else:
            p = paired_randomization(y, x, resamples=10000, seed=0)
            test = "paired randomisation"
        diff = mean_b - mean_a
        rows.append({"metric": m, "a": mean_a, "b": mean_b, "diff": diff,
                     "direction": "UP" if diff > 1e-12 else "DOWN" if diff < -1e-12 else "=",
                     "p": p, "test": test, "n": len(ids),
                     "improved": sum(v > u for u, v in zip(x, y)),
                     "degraded": sum(v < u for u, v in zip(x, y))})
    for row, adjusted in zip(rows, holm([r["p"] for r in rows])):
        row["p_holm"] = adjusted
    return {"a": name_a, "b": name_b, "questions": len(common), "rows": rows, "flips": flips}
