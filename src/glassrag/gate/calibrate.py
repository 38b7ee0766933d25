"""Calibrating the gate on the train split: which score it reads, whether that score can
separate answerable from unanswerable questions at all, and where the threshold goes.

The two populations are what the gate can win and lose: unanswerable questions, and
answerable questions whose answer the ranking found (in the top k it shows). An answerable
question whose answer was not found shows no answer whether the gate passes it or not.
Below, "answerable" means found. For each candidate threshold t (midpoints between the
observed scores, one below all of them and one above):

    kept(t)     = share of answerable questions whose score ≥ t
    declined(t) = share of unanswerable questions whose score < t
    cost(t)     = c · (1 − kept(t)) + (1 − declined(t))

c says how much worse a wrongly declined answer is than an answered unanswerable question. A
rule (`gate.rule`, a row of RULES in gate/rules.py) picks t among them: `cost` the t of least
cost, `balanced` the same with c = 1, `keep95` the highest t that keeps 95 % of the answers.

Separation is the AUROC of the score (Mann-Whitney: the chance that a random answerable
question outscores a random unanswerable one, ties count half) with a percentile
bootstrap interval. When the interval reaches 0.5 the score cannot separate the two on
this corpus: the threshold is left empty (None) and the gate declines nothing but questions
with no match at all, and says why. So it is with fewer than MIN_PER_CLASS questions in
either population, where no interval can be trusted.

Which score (`gate.score`): `combined` reads the logistic combination of `gate.signals` (the
answerability model's logit, the four shares of the question the passages hold and the
margin; COMBINED, the first five, is what a calibration made before the setting read), fitted
on the train split, its threshold placed on
out-of-fold scores; `auto` reads whichever candidate (every signal, or the combination of
all of them) does best on the train split. Measured on six corpora's test splits
(bench/gate_scores.py, bench/results/gate_scores.md), `auto`'s choice does not carry over:
with a dozen unanswerable train questions the candidate of least train cost is often a
chance winner (economics: `top:lsa`, 13 % of the test split's found answers declined), so
`combined` is the default. When the combination cannot be fitted (fewer than CV_FOLDS
questions of a class, or fewer than two of its signals present) or does not separate,
calibration falls back to `auto`: it never switches the gate off while a signal separates.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from glassrag.errors import ConfigError
from glassrag.gate import SCORES
from glassrag.gate.rules import choose, objective, rule_named
from glassrag.gate.score import CV_FOLDS, combined_oof, fit_combined
from glassrag.stats import auroc, auroc_interval

# the combination before gate.signals (a calibration that does not record what it read read
# these): the model's judgement and how much of the question the passages hold
COMBINED = ("answerability", "bm25_norm", "term_share", "coverage", "known_share")
# below this many found answers or unanswerable questions, no interval means anything
MIN_PER_CLASS = 5
# a logistic combination fitted on fewer questions than this per signal is flagged (the rule
# of thumb of ten events per variable, Peduzzi et al. 1996)
PER_FEATURE = 10
# a threshold that declines more than this share of the found train answers (out of fold for
# the combination) is saved with a warning (issue 47: economics declined 0.113 of its answerable
# test questions; the off-topic threshold's own bound is 1 - gate.offtopic_keep = 0.02)
FOUND_DECLINED_BOUND = 0.05


def sweep(answerable: Sequence[float], unanswerable: Sequence[float],
          cost: float = 1.0, weights: Sequence[float] | None = None) -> list[dict[str, float]]:
    """kept/declined/cost at every threshold that changes either (a question with no hit
    has score -inf: it is declined at every threshold). With `weights` on the unanswerable
    questions, declined(t) = Σ_j w_j [u_j < t] / Σ_j w_j."""
    a = np.asarray(answerable, dtype=np.float64)
    u = np.asarray(unanswerable, dtype=np.float64)
    w = np.ones(u.size) if weights is None else np.asarray(weights, dtype=np.float64)
    both = np.concatenate([a, u])
    finite = np.unique(both[np.isfinite(both)])
    cuts = [float(finite[0]) - 1.0] if finite.size else [0.0]
    cuts += [float(x) for x in (finite[:-1] + finite[1:]) / 2.0]
    if finite.size:
        cuts.append(float(finite[-1]) + 1.0)
    # kept: the answerable at or above t; declined: the unanswerable below t (counted by a
    # binary search of each sorted class for all thresholds at once)
    n_kept = a.size - np.searchsorted(np.sort(a), cuts, side="left")
    order = np.argsort(u, kind="stable")
    declined_weight = np.r_[0.0, np.cumsum(w[order])][np.searchsorted(u[order], cuts, side="left")]
    rows = []
    for t, ka, du in zip(cuts, n_kept.tolist(), declined_weight.tolist()):
        kept = ka / a.size if a.size else 0.0
        declined = du / w.sum() if u.size else 0.0
        rows.append({"threshold": t, "answerable_kept": kept, "unanswerable_declined": declined,
                     "balanced_accuracy": (kept + declined) / 2.0,
                     "cost": cost * (1.0 - kept) + (1.0 - declined)})
    return rows


def candidate(name: str, pos: Sequence[float], neg: Sequence[float], rule: str, cost: float,
              fitted: bool, weights: Sequence[float] | None = None) -> dict[str, Any]:
    """One candidate score: its AUROC with interval, and the rule's outcome on it."""
    low, high = auroc_interval(pos, neg, weights=weights)
    chosen = choose(sweep(pos, neg, cost, weights), rule, cost)
    return {"signal": name, "auroc": auroc(pos, neg, weights), "low": low, "high": high, "fitted": fitted,
            "objective": objective(chosen, rule, cost), "kept": chosen["answerable_kept"],
            "declined": chosen["unanswerable_declined"]}


def beats(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Candidate `a` does better than `b` where the gate operates: a lower objective at the
    rule's threshold, or the same objective with a higher AUROC."""
    return bool(a["objective"] < b["objective"] or (a["objective"] == b["objective"] and a["auroc"] > b["auroc"]))


def calibrate(answerable: list[dict[str, float]], unanswerable: list[dict[str, float]], rule: str,
              cost: float, source: str, weights: Sequence[float] | None = None,
              score: str = "auto", combined: Sequence[str] = COMBINED) -> dict[str, Any]:
    """Choose the gate's score and threshold from each train question's signals.

    Every signal every question has is a candidate, and so is their logistic-regression
    combination, scored out of fold (cross-validated). With `score` "combined" the gate
    reads the combination of COMBINED's signals (out of fold likewise) when it can be fitted
    and separates. Otherwise ("auto", or the fallback) only a candidate that separates (its
    AUROC interval lies above 0.5) can be chosen; among those the gate reads the one that
    does best where the gate operates: the least cost (the rule's objective) at the
    threshold the rule picks on it, ties broken by the higher AUROC; the combination must
    beat every single separating signal to be chosen. Only when no candidate separates is
    the threshold None, and `why` names the one that came closest (the highest lower bound).
    `weights`: one per unanswerable question (e.g. each kind, on-topic and off-topic,
    weighing as much in total), used in every AUROC and every share declined. The record's
    `how` says which way the score was chosen (combined, or auto and why). `combined`: the
    signals the combination reads (COMBINED; bench/gate_scores.py `--signals` measures others).
    """
    if not unanswerable:
        raise ConfigError(
            f"{source} has no unanswerable questions in this split, so the threshold cannot be "
            "calibrated: the sweep needs questions the documents do not answer to see what "
            "declining gains",
            'add questions with "answerable": false (and "kind": "unanswerable") to the train split')
    if not answerable:
        raise ConfigError(f"{source} has no answerable questions whose answer was found in this split",
                          "the sweep needs found answers to see what declining costs")
    rule_named(rule)  # a ConfigError naming the rules there are
    if score not in SCORES:
        raise ConfigError(f"unknown gate score {score!r}", f"choose one of: {', '.join(SCORES)}")
    if weights is not None and len(weights) != len(unanswerable):
        raise ValueError(f"{len(weights)} weights for {len(unanswerable)} unanswerable questions")
    names = sorted(set.intersection(*(set(s) for s in [*answerable, *unanswerable])))
    scores = {n: ([s[n] for s in answerable], [s[n] for s in unanswerable]) for n in names}
    table = [candidate(n, *scores[n], rule, cost, False, weights) for n in names]

    def order(r: dict[str, Any]) -> tuple[float, float, str]:
        return (r["objective"], -r["auroc"], r["signal"])

    separating = [r for r in table if r["low"] > 0.5]
    best = min(separating or table, key=order)
    chosen_score: dict[str, Any] = {"kind": "signal", "name": best["signal"]}
    enough = min(len(answerable), len(unanswerable)) >= CV_FOLDS
    fixed = [n for n in combined if n in names]
    how = "auto"
    if score == "combined":
        if not enough or len(fixed) < 2:
            how = (f"auto: the combination of {', '.join(combined)} needs at least {CV_FOLDS} questions of each "
                   f"class and two of its signals ({len(answerable)} found answers, {len(unanswerable)} "
                   f"unanswerable; signals present: {', '.join(fixed) or 'none'})")
        else:
            scores["combined"] = combined_oof(answerable, unanswerable, fixed, weights=weights)
            combo = {**candidate("combined", *scores["combined"], rule, cost, True, weights), "names": fixed}
            table.append(combo)
            if combo["low"] > 0.5:
                best, how = combo, "combined"
                chosen_score = fit_combined(answerable, unanswerable, fixed, weights)
            else:
                how = (f"auto: the combination of {', '.join(fixed)} does not separate "
                       f"(AUROC interval [{combo['low']:.2f}, {combo['high']:.2f}])")
    if how != "combined" and len(names) > 1 and enough:
        scores["combined"] = combined_oof(answerable, unanswerable, names, weights=weights)
        combo = {**candidate("combined", *scores["combined"], rule, cost, True, weights), "names": names}
        table = [r for r in table if r["signal"] != "combined"] + [combo]
        if combo["low"] > 0.5 and all(beats(combo, r) for r in separating):
            best = combo
            chosen_score = fit_combined(answerable, unanswerable, names, weights)
    table.sort(key=order)
    few = min(len(answerable), len(unanswerable)) < MIN_PER_CLASS
    separable = bool(best["low"] > 0.5) and not few
    closest = max(table, key=lambda r: (r["low"], r["signal"]))
    why = (f"too few train questions to tell: {len(answerable)} found answers and {len(unanswerable)} "
           f"unanswerable (at least {MIN_PER_CLASS} of each are needed)" if few else
           "" if separable else
           f"no signal's AUROC interval lies above 0.5; the closest, {closest['signal']}, has "
           f"[{closest['low']:.2f}, {closest['high']:.2f}]")
    rows = sweep(*scores[best["signal"]], cost, weights)
    chosen = choose(rows, rule, cost)
    warnings = []
    absent = [n for n in combined if n not in names]
    if how == "combined" and absent:
        warnings.append(f"the combination reads {', '.join(fixed)} without {', '.join(absent)}, which not every "
                        "train question has (gate.signals; gate/signals.py names the signals)")
    if not separable:
        warnings.append("the gate cannot do better than chance on this train split, so it declines "
                        "nothing but questions that match no passage: " + why)
    lost = 1.0 - chosen["answerable_kept"]
    if separable and lost > FOUND_DECLINED_BOUND:
        fold = " out of fold" if chosen_score["kind"] == "combined" else ""
        warnings.append(f"the threshold declines {lost:.1%} of the {len(answerable)} found train answers{fold}, "
                        f"more than {FOUND_DECLINED_BOUND:.0%}: expect the gate to hide answers the ranking found; "
                        "a lower gate.cost or gate.rule = keep95 trades unanswerable questions for them")
    n = len(answerable) + len(unanswerable)
    if chosen_score["kind"] == "combined" and n < PER_FEATURE * len(chosen_score["names"]):
        warnings.append(f"the combination of {len(chosen_score['names'])} signals was fitted on {n} questions, fewer "
                        f"than {PER_FEATURE} a signal: its weights are unstable; label more train questions")
    return {"score": chosen_score, "threshold": chosen["threshold"] if separable else None, "rule": rule,
            "cost": cost, "score_mode": score, "how": how, "separable": separable, "why": why,
            "auroc": {k: best[k] for k in ("auroc", "low", "high")},
            "signals": table, "chosen": chosen, "sweep": rows,
            "n_answerable": len(answerable), "n_unanswerable": len(unanswerable), "warnings": warnings}


def calibrate_offtopic(answerable: list[dict[str, float]], offtopic: list[dict[str, float]],
                       keep: float, combined: Sequence[str] = COMBINED) -> dict[str, Any]:
    """The second threshold: a combination of COMBINED's signals fitted on found answers
    against off-topic questions only, its threshold the highest t that keeps at least `keep`
    of the found answers, both out of fold:

        t = max{ t : share of found answers whose out-of-fold score ≥ t  ≥ keep }

    The first gate weighs the golden set's own unanswerable questions as much as the
    off-topic ones, and its cost c trades both against found answers; a question no corpus is
    about still passes it when its words occur in the documents (SciFact's abstracts hold
    most of "In what year was the Premier League created?"). This score learns only that
    difference, and `keep` bounds what it may cost. Not active (threshold None, and why)
    with fewer than CV_FOLDS questions of a class, fewer than two of its signals, or when
    its AUROC interval reaches 0.5."""
    names = [n for n in combined if all(n in s for s in [*answerable, *offtopic])]
    record: dict[str, Any] = {"keep": keep, "threshold": None, "score": None, "n_answerable": len(answerable),
                              "n_offtopic": len(offtopic), "why": ""}
    if min(len(answerable), len(offtopic)) < max(CV_FOLDS, MIN_PER_CLASS) or len(names) < 2:
        record["why"] = (f"needs at least {max(CV_FOLDS, MIN_PER_CLASS)} found answers and off-topic questions and "
                         f"two of {', '.join(combined)} ({len(answerable)} found, {len(offtopic)} off-topic; "
                         f"signals: {', '.join(names) or 'none'})")
        return record
    pos, neg = combined_oof(answerable, offtopic, names)
    low, high = auroc_interval(pos, neg)
    record["auroc"] = {"auroc": auroc(pos, neg), "low": low, "high": high}
    if low <= 0.5:
        record["why"] = f"it does not separate found answers from off-topic questions (AUROC [{low:.2f}, {high:.2f}])"
        return record
    ok = [r for r in sweep(pos, neg) if r["answerable_kept"] >= keep]
    chosen = max(ok, key=lambda r: r["threshold"])
    record.update({"threshold": chosen["threshold"], "score": fit_combined(answerable, offtopic, names),
                   "kept": chosen["answerable_kept"], "declined": chosen["unanswerable_declined"]})
    return record
