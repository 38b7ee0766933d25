"""The shared cause (issue 31, item 6): the answerable test questions that no configuration of
the experiment log answers (answer hit@5 = 0 in every arm of every experiment's evidence),
and what they have in common against those some configuration answers.

Per question, from the golden set and the index's chunks:

- vocabulary gap: the share of the question's content words (the index's analyzer: lowercased,
  stopwords removed, stemmed) absent from the answering passage,

      gap(q) = |W(q) − W(passage)| / |W(q)|

  the passage being the chunks of the answer's document that hold its verbatim span (for a
  question without answer text, SciFact's, the answer document's chunks);
- question words |W(q)| and answer length (words of the answer span);
- question kind and locator type (page, section, sheet, ...): the share never answered, of each.

A mean carries its percentile bootstrap interval (10,000 resamples, seed 0); a difference of
means (never − answered) the bootstrap of two independent samples; a share its Wilson interval.
`glassrag experiment cause` writes the table to experiments/shared-cause.json; the
development page shows it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from glassrag.evaluate.golden import Question, normalize_space
from glassrag.stats import mean_interval, wilson_interval

METRIC = "answer hit@5"
RESAMPLES = 10000


def answered(evidence: Iterable[Mapping[str, Any]], metric: str = METRIC) -> dict[str, dict[str, bool]]:
    """corpus → question id → True when some arm of some experiment answers it (`metric` = 1),
    from the per-question figures of the evidence (files without them are skipped)."""
    out: dict[str, dict[str, bool]] = defaultdict(dict)
    for ev in evidence:
        for corpus, c in ev.get("corpora", {}).items():
            f = c.get("per_question", {}).get(metric)
            if not f:
                continue
            for qid, a, b in zip(f["ids"], f["baseline"], f["change"]):
                out[corpus][qid] = out[corpus].get(qid, False) or a > 0 or b > 0
    return dict(out)


def configurations(evidence: Iterable[Mapping[str, Any]], metric: str = METRIC) -> dict[str, int]:
    """corpus → number of distinct arms measured on it (the baseline counted once)."""
    arms: dict[str, set[str]] = defaultdict(set)
    for ev in evidence:
        for corpus, c in ev.get("corpora", {}).items():
            if metric in c.get("per_question", {}):
                arms[corpus].update({"baseline", ev["name"]})
    return {c: len(a) for c, a in arms.items()}


def locator_type(locator: str) -> str:
    """'page 3' and 'p. 3' → page; '§ 2.1' → section; 'sheet Rates' → sheet; else its first word."""
    first = locator.strip().split(" ")[0].lower() if locator.strip() else ""
    return {"p.": "page", "page": "page", "§": "section", "": "none"}.get(first, first)


def passage(question: Question, chunks: Sequence[Any]) -> str:
    """The text of the chunks of the answer's document that hold (part of) its span."""
    texts = []
    for span in question.answers:
        doc = [c for c in chunks if c.doc_id == span.doc]
        if not span.text:
            texts += [c.text for c in doc]
            continue
        want = normalize_space(span.text)
        ends = {want[:40], want[-40:]}
        texts += [c.text for c in doc if any(e in normalize_space(c.text) for e in ends)] or [span.text]
    return "\n".join(texts)


def features(question: Question, chunks: Sequence[Any], analyze: Callable[[str], list[str]]) -> dict[str, Any]:
    """One question's figures (module docstring)."""
    words = set(analyze(question.question))
    there = set(analyze(passage(question, chunks)))
    span = " ".join(a.text for a in question.answers)
    return {"gap": len(words - there) / len(words) if words else 0.0, "question_words": len(words),
            "answer_words": len(re.findall(r"\w+", span)), "kind": question.kind or "none",
            "locator": locator_type(question.answers[0].locator if question.answers else "")}


def difference_interval(x: Sequence[float], y: Sequence[float], seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(x) − mean(y), x and y resampled independently."""
    rng = np.random.default_rng(seed)
    a, b = np.asarray(x, float), np.asarray(y, float)
    ma = a[rng.integers(0, len(a), (RESAMPLES, len(a)))].mean(axis=1)
    mb = b[rng.integers(0, len(b), (RESAMPLES, len(b)))].mean(axis=1)
    low, high = np.quantile(ma - mb, [0.025, 0.975])
    return float(low), float(high)


def _mean(values: Sequence[float]) -> dict[str, Any]:
    if not values:
        return {"value": None, "low": None, "high": None, "n": 0}
    low, high = mean_interval(values, RESAMPLES, 0) if len(values) > 1 else (values[0], values[0])
    return {"value": float(np.mean(values)), "low": low, "high": high, "n": len(values)}


def shared_cause(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The measured statement: rows are `features(...)` with `corpus`, `id` and `answered`;
    returns the never-answered questions and, per figure, both groups with intervals."""
    never = [r for r in rows if not r["answered"]]
    some = [r for r in rows if r["answered"]]
    numeric = []
    for key, label in (("gap", "question words absent from the answering passage (share)"),
                       ("question_words", "content words in the question"),
                       ("answer_words", "words in the answer span")):
        x, y = [float(r[key]) for r in never], [float(r[key]) for r in some]
        diff = float(np.mean(x) - np.mean(y)) if x and y else None
        low, high = difference_interval(x, y) if len(x) > 1 and len(y) > 1 else (None, None)
        numeric.append({"figure": key, "label": label, "never": _mean(x), "answered": _mean(y),
                        "difference": {"value": diff, "low": low, "high": high}})
    shares = []
    for key in ("kind", "locator"):
        for value in sorted({r[key] for r in rows}):
            group = [r for r in rows if r[key] == value]
            k = sum(1 for r in group if not r["answered"])
            low, high = wilson_interval(k, len(group))
            shares.append({"by": key, "value": value, "questions": len(group), "never": k,
                           "share": k / len(group), "low": low, "high": high})
    per_corpus = defaultdict(lambda: {"questions": 0, "never": 0})
    for r in rows:
        per_corpus[r["corpus"]]["questions"] += 1
        per_corpus[r["corpus"]]["never"] += not r["answered"]
    return {"questions": len(rows), "never": [{"corpus": r["corpus"], "id": r["id"]} for r in never],
            "corpora": dict(per_corpus), "figures": numeric, "shares": shares}


def measure_cause(log: Any, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The shared cause over the log's evidence: each corpus's default index (built or read
    under the log's work folder) gives the passages and the analyzer."""
    import json

    from glassrag.config import Config
    from glassrag.experiment import work_folder
    from glassrag.experiment.corpora import load_corpora, workbench

    evidence = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((log / "results").glob("*.json"))]
    outcome = answered(evidence)
    corpora = load_corpora(log)
    rows = []
    for name, ids in outcome.items():
        if name not in corpora or corpora[name].missing():
            continue
        (progress or (lambda m: None))(f"shared cause: {name}")
        made = workbench(corpora[name], work_folder(log))
        index = made.index(Config())
        by_id = {q.id: q for q in made.questions}
        rows += [{"corpus": name, "id": qid, "answered": ok, **features(by_id[qid], index.chunks, index.analyzer)}
                 for qid, ok in ids.items() if qid in by_id]
    return {**shared_cause(rows), "metric": METRIC, "configurations": configurations(evidence),
            "experiments": sorted(ev["name"] for ev in evidence
                                  if any(METRIC in c.get("per_question", {}) for c in ev["corpora"].values()))}
