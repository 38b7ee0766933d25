"""The verdict rule of the experiment log (rule 2): one pooled paired test over every test
question of every corpus decides whether a change helps, and per-corpus tests (Holm across
the corpora) say where it hurts or where alone it helps.

Why pooled: a corpus of the log has 50-70 answerable test questions, and between two
configurations only 3-13 % of them flip, so an exact McNemar test on one corpus cannot reach
80 % power for any difference at that discordance (it needs 6 questions flipped all one way
to reach p < 0.05 at all, 8 under Holm across five corpora; scripts/power.py,
docs/verdict-rule.md). Pooled over the five corpora's 339 questions the test detects 0.040.

The tests, on the per-question figures the evidence stores (`per_question`):

- pooled: the questions of all corpora concatenated (each question weighs the same),
  exact McNemar on the pooled discordant pairs for a 0/1 metric, a paired sign-flip
  randomisation test (10,000 resamples, seed 0) on the pooled differences for a graded one.
  A sign-flip test is valid across corpora without stratifying, since each question's
  sign is flipped on its own; for a 0/1 metric it is the McNemar test.
- per corpus: the same test on one corpus, Holm-adjusted across the corpora measured.
- `also` metrics: the pooled test of each, Holm-adjusted across the `also` metrics.

The verdicts (alpha = 0.05, "better"/"worse" in the metric's direction):

- kept: the pooled difference is better (p < alpha), no corpus is worse (Holm p < alpha),
  and no `also` metric is worse (pooled, Holm p < alpha);
- trade: the pooled difference is better but a corpus or an `also` metric is worse; or it
  is worse while an `also` metric is better; or, the pooled test deciding nothing, one
  corpus is better and another worse;
- kept for one set only: the pooled test decides nothing, one or more corpora are better,
  none worse and no `also` metric worse;
- rejected: everything else (no difference the tests can tell from chance, or a loss).

An experiment may set `shipped = true`: the change is in the defaults users get whatever
its verdict (a trade made on purpose); the verdict is not changed by it.
"""

from __future__ import annotations

from typing import Any, Sequence

from glassrag.schema import flat_spec
from glassrag.stats import holm

RULE = 2
ALPHA = 0.05
VERDICTS = ("kept", "rejected", "trade", "kept for one set only")
# rule 1's name for the last verdict, kept so that evidence written before rule 2 reads
RENAMED = {"one corpus only": "kept for one set only"}


def paired_test(metric: str, baseline: Sequence[float], change: Sequence[float]) -> dict[str, Any]:
    """The paired test of `change` against `baseline` on the same questions, in `metric`'s
    direction: {"diff": mean(change) - mean(baseline), "p", "test", "n", "improved", "degraded"}."""
    n = len(baseline)
    if n != len(change):
        raise ValueError(f"{metric}: {n} baseline figures against {len(change)} changed ones")
    spec = flat_spec(metric)
    sign = 1.0 if spec.better == "higher" else -1.0
    improved = sum(1 for a, b in zip(baseline, change) if sign * (b - a) > 0)
    degraded = sum(1 for a, b in zip(baseline, change) if sign * (b - a) < 0)
    if n == 0:
        return {"diff": 0.0, "p": 1.0, "test": "none", "n": 0, "improved": 0, "degraded": 0}
    return {"diff": sum(change) / n - sum(baseline) / n, "p": spec.paired_p(improved, degraded, baseline, change),
            "test": spec.paired_test, "n": n,
            "improved": improved, "degraded": degraded}


def sign(metric: str, diff: float) -> int:
    """+1 when a difference is an improvement in `metric`'s direction, -1 when worse, 0 when none."""
    d = diff if flat_spec(metric).better == "higher" else -diff
    return 1 if d > 1e-12 else -1 if d < -1e-12 else 0


def pooled(metric: str, per_corpus: dict[str, Any]) -> dict[str, Any] | None:
    """The pooled paired test of `metric` over every corpus whose evidence holds its
    per-question figures (in the evidence's corpus order), or None when none does."""
    names = [c for c, v in per_corpus.items() if metric in v.get("per_question", {})]
    if not names:
        return None
    a = [x for c in names for x in per_corpus[c]["per_question"][metric]["baseline"]]
    b = [x for c in names for x in per_corpus[c]["per_question"][metric]["change"]]
    return {**paired_test(metric, a, b), "corpora": names}


def tests(metric: str, also: Sequence[str], per_corpus: dict[str, Any]) -> dict[str, Any]:
    """Every test the rule reads, recomputed from the per-question figures alone:
    {"pooled": {metric: ...}, "corpora": {corpus: {metric: ...}}}, with `p_holm` added to
    the deciding metric's per-corpus rows (across corpora) and to the `also` metrics'
    pooled rows (across those metrics)."""
    pooled_rows = {m: row for m in (metric, *also) if (row := pooled(m, per_corpus)) is not None}
    corpus_rows = {c: {m: paired_test(m, f["baseline"], f["change"]) for m, f in v.get("per_question", {}).items()}
                   for c, v in per_corpus.items() if "per_question" in v}
    deciding = [rows[metric] for rows in corpus_rows.values() if metric in rows]
    for row, p in zip(deciding, holm([r["p"] for r in deciding])):
        row["p_holm"] = p
    others = [pooled_rows[m] for m in also if m in pooled_rows]
    for row, p in zip(others, holm([r["p"] for r in others])):
        row["p_holm"] = p
    return {"pooled": pooled_rows, "corpora": corpus_rows}


def decide(metric: str, also: Sequence[str], per_corpus: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(verdict, reason, the tests it read) by the rule in this module's docstring."""
    t = tests(metric, also, per_corpus)
    head = t["pooled"].get(metric)
    if head is None or head["n"] == 0:
        return "rejected", f"{metric} could not be measured on any corpus", t
    rows = {c: r[metric] for c, r in t["corpora"].items() if metric in r}
    better_on = [c for c, r in rows.items() if r["p_holm"] < ALPHA and sign(metric, r["diff"]) > 0]
    worse_on = [c for c, r in rows.items() if r["p_holm"] < ALPHA and sign(metric, r["diff"]) < 0]
    also_rows = {m: r for m, r in t["pooled"].items() if m != metric}
    also_better = [m for m, r in also_rows.items() if r["p_holm"] < ALPHA and sign(m, r["diff"]) > 0]
    also_worse = [m for m, r in also_rows.items() if r["p_holm"] < ALPHA and sign(m, r["diff"]) < 0]
    up = head["p"] < ALPHA and sign(metric, head["diff"]) > 0
    down = head["p"] < ALPHA and sign(metric, head["diff"]) < 0

    def on(cs: list[str]) -> str:
        return ", ".join(f"{c} ({rows[c]['diff']:+.3f}, Holm p = {rows[c]['p_holm']:.2g})" for c in cs)

    def pooled_said(m: str, r: dict[str, Any]) -> str:
        return f"pooled {m} {r['diff']:+.3f} (p = {r['p']:.2g}, n = {r['n']}, +{r['improved']}/−{r['degraded']})"

    def moved(ms: list[str], word: str) -> str:
        return "; ".join(f"{pooled_said(m, also_rows[m])} {word}" for m in ms)

    said = pooled_said(metric, head)
    if up and not worse_on and not also_worse:
        verdict, reason = "kept", f"{said}; worse on no corpus"
    elif up:
        verdict, reason = "trade", "; ".join(filter(None, [
            said, f"but worse on {on(worse_on)}" if worse_on else "", moved(also_worse, "worse")]))
    elif down and also_better:
        verdict, reason = "trade", f"{said}; {moved(also_better, 'better')}"
    elif down:
        verdict, reason = "rejected", f"{said}: worse"
    elif better_on and worse_on:
        verdict, reason = "trade", f"{said}: no pooled difference; better on {on(better_on)}, worse on {on(worse_on)}"
    elif better_on and not also_worse:
        verdict, reason = "kept for one set only", f"{said}: no pooled difference; better on {on(better_on)} only"
    elif better_on:
        verdict, reason = "trade", f"{said}; better on {on(better_on)}; {moved(also_worse, 'worse')}"
    else:
        verdict, reason = "rejected", f"{said}: no difference the pooled test can tell from chance" + (
            f"; worse on {on(worse_on)}" if worse_on else "")
    rest = [x for x in (moved(also_better, "better"), moved(also_worse, "worse")) if x and x not in reason]
    return verdict, reason + (f"; also: {'; '.join(rest)}" if rest else ""), t
