"""What each figure of a run is, in one table: `MetricSpec` (0/1 or graded, which way is better,
its cutoff k), so the evaluator, `compare`, the experiment log, sweeps and the CLI read a metric's
nature from its definition instead of each guessing it from the name.

A 0/1 metric has one outcome per question, 0 or 1 (hit@k, declined_unanswerable): its interval
is Wilson's and two runs are compared by McNemar's exact test on the questions that flipped. A
graded one is any number per question (mrr@10, recall@k, a cosine): a bootstrap interval and a
paired randomisation test.

A run names a metric as ranx does, `base` or `base@k` ("hit@5", "declined_answerable"), and its
flat namespace puts the section or the stage before it ("answer hit@5", "lsa vector_hit"):
`metric_spec` and `flat_spec` resolve both through `SPECS`, and an unknown name lists the valid ones.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Self, Sequence

from glassrag.errors import UnknownNameError
from glassrag.schema.corpus import _Plain

KINDS = ("0/1", "graded")
DIRECTIONS = ("higher", "lower")
MCNEMAR, RANDOMISATION = "McNemar exact", "paired randomisation"


@dataclass(frozen=True)
class MetricSpec(_Plain):
    """One metric: `base` ("hit"), `kind` ("0/1" or "graded"), `better` ("higher" or "lower"),
    `k` (its cutoff, None when it has none) and what it measures. `test` is the paired test
    two runs are compared by, when it is not the one its kind implies (see `SPECS`)."""

    base: str
    kind: str
    better: str = "higher"
    k: int | None = None
    doc: str = ""
    test: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS or self.better not in DIRECTIONS:
            raise ValueError(f"metric {self.base!r}: kind must be one of {KINDS} and better one of "
                             f"{DIRECTIONS}, got {self.kind!r}, {self.better!r}")

    @property
    def name(self) -> str:
        """The name a run stores it under: "hit@5", "declined_answerable"."""
        return self.base if self.k is None else f"{self.base}@{self.k}"

    @property
    def zero_one(self) -> bool:
        return self.kind == "0/1"

    @property
    def paired_test(self) -> str:
        """The test `compare` and the experiment log use on two runs' per-question figures."""
        return self.test or (MCNEMAR if self.zero_one else RANDOMISATION)

    def paired_p(self, improved: int, degraded: int, before: Sequence[float], after: Sequence[float]) -> float:
        """The p-value of `after` against `before` (the same questions' figures) by `paired_test`:
        McNemar's on the `improved` and `degraded` counts, else the sign-flip randomisation test
        (10,000 resamples, seed 0) on the figures."""
        from glassrag.stats import mcnemar_exact, paired_randomization

        if self.paired_test == MCNEMAR:
            return mcnemar_exact(improved, degraded)
        return paired_randomization(list(after), list(before), resamples=10000, seed=0)

    def at(self, k: int | None) -> MetricSpec:
        """The same metric at cutoff `k`."""
        return replace(self, k=k)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(str(data["base"]), str(data["kind"]), str(data.get("better", "higher")), data.get("k"),
                   str(data.get("doc", "")), str(data.get("test", "")))


def _spec(base: str, kind: str, doc: str, better: str = "higher", test: str = "") -> MetricSpec:
    return MetricSpec(base, kind, better, None, doc, test)


# `compare` has always tested these four with the randomisation test although they are 0/1 (their
# intervals are Wilson's): kept so that its p-values stay as they were; McNemar's would be the
# test their kind implies (a decision left to issue 29, not made by this refactor).
_AS_GRADED = RANDOMISATION

SPECS: dict[str, MetricSpec] = {s.base: s for s in (
    # a ranking, per question, from its graded labels (evaluate/metrics.py)
    _spec("hit", "0/1", "an answer unit in the top k"),
    _spec("top1", "0/1", "the first passage holds an answer unit (hit@1)"),
    _spec("recall", "graded", "share of the answer units in the top k"),
    _spec("precision", "graded", "share of the top k that are answer units"),
    _spec("mrr", "graded", "1 / rank of the first answer unit (0 when none in the top k)"),
    _spec("ndcg", "graded", "discounted gain of the top k over the ideal's"),
    _spec("map", "graded", "average precision"),
    _spec("source_recall", "graded", "share of the answer's documents among the top k's"),
    _spec("answer_intact", "0/1", "some chunk holds a whole answer span (not cut by chunking)"),
    _spec("rank1_buried", "0/1", "a fused retriever ranked an answer unit first and the fusion put none in the top k",
          better="lower"),
    # the answer after the gate
    _spec("answer_visible", "0/1", "the shown passages' text holds the answer"),
    _spec("locator_hit", "0/1", "a shown passage is at the labelled locator", test=_AS_GRADED),
    _spec("declined", "0/1", "the gate declined the question"),
    _spec("declined_answerable", "0/1", "an answerable question declined", better="lower"),
    _spec("declined_unanswerable", "0/1", "an unanswerable question declined"),
    _spec("declined_offtopic", "0/1", "a bundled off-topic question declined"),
    _spec("reader_accuracy", "0/1", "the reader quoted an answer, or said not found when there is none",
          test=_AS_GRADED),
    _spec("budget_recall", "0/1", "an answer chunk is in the packed context", test=_AS_GRADED),
    _spec("reader_declined_unanswerable", "0/1", "the reader found nothing to quote for an unanswerable "
                                                 "question", test=_AS_GRADED),
    # a dense stage's own figures
    _spec("vector_hit", "0/1", "the dense stage returned a passage"),
    _spec("mean_top_similarity", "graded", "the cosine of the dense stage's best passage (0 when none)"),
    # a generated answer's (evaluate/grade.py)
    _spec("foreign_citations", "0/1", "cites a title that was not given", better="lower"),
    _spec("leaked_tags", "0/1", "the prompt's tags leaked into the answer", better="lower"),
    _spec("cited", "0/1", "cites a given passage"),
    _spec("refused_unanswerable", "0/1", "refused an unanswerable question"),
    _spec("refused_answerable", "0/1", "refused an answerable question", better="lower"),
    _spec("hedged", "0/1", "hedged instead of answering", better="lower"),
    _spec("wording_share", "graded", "share of the answer's words found in the given passages"),
    _spec("contains_answer", "0/1", "the answer contains a labelled phrase"),
    _spec("failed", "0/1", "the backend refused the prompt: no answer", better="lower"),
)}


def metric_spec(name: str) -> MetricSpec:
    """The spec of a metric as a run names it, "hit@5" or "declined_answerable"."""
    base, at, k = name.partition("@")
    spec = SPECS.get(base)
    if spec is None or (at and not (k.isdigit() and int(k) >= 1)):
        raise UnknownNameError("metric", name, [f"{b}[@k]" for b in SPECS])
    return spec.at(int(k) if at else None)


def flat_spec(name: str) -> MetricSpec:
    """The spec of a metric in a run's flat namespace, "answer hit@5" or "lsa vector_hit": the
    section or stage comes first, the metric's own name last."""
    return metric_spec(name.rpartition(" ")[2])
