"""What every exhibit of the lab shares: the index and its labelled questions (a `LabBench`),
reading a page's settings, and ranking questions through glassrag's own stages.

A LabBench is made once per index generation and kept by the web app; it measures through a
workbench (evaluate/workbench.py, as a sweep and the experiment log do) that keeps one stage
cache, so a change of one setting re-runs only the stages it reaches, and it keeps a memo of
finished computations (a heat map, a trained model). Computations on one LabBench run one at
a time (the stage cache is not thread-safe).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TypeVar

from glassrag.config import SETTINGS, Config
from glassrag.errors import ConfigError, QueryError
from glassrag.evaluate.fitting import AS_BUILT
from glassrag.evaluate.golden import Question
from glassrag.evaluate.metrics import evaluate_run, mean_of
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.workbench import Workbench
from glassrag.pipeline import Pipeline
from glassrag.stage_cache import StageCache
from glassrag.store.base import Index

T = TypeVar("T")
# what a LabBench remembers (its memo, its workbench's fitted indexes and runs) before it forgets all
MEMO_KEPT = 512
Ranked = dict[str, dict[str, list[str]]]  # stage -> question id -> ranked units (Judgement.ranked_units)
Qrels = dict[str, dict[str, int]]

# the settings of a retrieval-only pipeline: nothing after fusion changes the lists measured
RETRIEVAL_ONLY = {"rerank": {"method": "none"}, "gate": {"enabled": False}, "versions": {"mode": "off"},
                  "mmr": {"relevance": None}, "cap": {"per_document": 0}}


@dataclass
class LabBench:
    """One index generation and its labelled questions, with the caches the exhibits share:
    its workbench (evaluate/workbench.py: the index as it is, one stage cache, one judge),
    the pipelines of the settings asked for lately, and a memo."""

    name: str
    index: Index
    questions: tuple[Question, ...]
    golden: str  # the golden file or BEIR folder the questions came from ("" when none)
    folder: Path | None = None  # the index folder (where exhibit 6 keeps the user's runs)
    workbench: Workbench = field(init=False)
    judge: Judge = field(init=False)
    cache: StageCache | None = field(init=False)
    memo: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.workbench = Workbench(self.questions, self.golden, base=self.index, fitting=AS_BUILT,
                                   keep=MEMO_KEPT)
        own = self.workbench.variant(self.index.config)
        self.judge, self.cache = own.judge, own.cache
        self._pipelines: dict[str, Pipeline] = {}

    def split(self, name: str) -> list[Question]:
        """The questions of one split (train, test or all)."""
        if name not in ("train", "test", "all"):
            raise ConfigError(f"unknown split {name!r}", "choose one of: train, test, all")
        return [q for q in self.questions if name == "all" or q.split == name]

    def needs_questions(self) -> None:
        if not self.questions:
            raise ConfigError(f"index {self.name!r} has no labelled questions for the lab to measure on",
                              "serve an index whose golden set the server can find (its calibration, "
                              "its reranker or a saved run names it), or the demo")

    def config(self, base: Config | None = None, **sections: dict[str, Any]) -> Config:
        """The index's configuration (or `base`) with some sections changed."""
        return (base or self.index.config).with_overrides(**sections) if sections else (base or self.index.config)

    def pipeline(self, config: Config) -> Pipeline:
        """The workbench's pipeline of `config` (sharing its stage cache), kept per configuration."""
        key = config.key()
        with self.lock:
            if key not in self._pipelines:
                if len(self._pipelines) >= 64:
                    self._pipelines.clear()
                self._pipelines[key] = self.workbench.pipeline(config)
            return self._pipelines[key]

    def remember(self, key: Any, compute: Callable[[], T]) -> T:
        """`compute()` once per key for this generation."""
        text = json.dumps(key, sort_keys=True, default=str)
        with self.lock:
            if text not in self.memo:
                if len(self.memo) >= MEMO_KEPT:
                    self.memo.clear()
                self.memo[text] = compute()
            return self.memo[text]  # type: ignore[no-any-return]


def qrels_of(bench: LabBench, questions: Sequence[Question]) -> Qrels:
    """The labelled units of each answerable question (as evaluate() builds its qrels)."""
    return {q.id: dict(bench.judge.judge(q).units) for q in questions if q.answerable}


def retriever_rankings(bench: LabBench, config: Config, questions: Sequence[Question],
                       names: Sequence[str]) -> Ranked:
    """Each named retriever's ranked units per answerable question, from the pipeline's own
    analysis and retriever stages (no fusion, nothing after): the lists `glassrag eval`
    measures as those stages."""
    pipeline = bench.pipeline(config)
    out: Ranked = {n: {} for n in names}
    for q in questions:
        if not q.answerable:
            continue
        try:
            query, _ = pipeline.analyze(q.question)
        except QueryError:
            continue  # evaluate() records no list: the question scores 0
        judgement = bench.judge.judge(q)
        for n in names:
            hits = pipeline.retrievers[n].run(query, {}).hits  # the contract's method: any retriever has it
            if hits:
                out[n][q.id] = judgement.ranked_units([h.chunk_id for h in hits])
    return out


def pipeline_rankings(bench: LabBench, config: Config, questions: Sequence[Question]) -> tuple[Ranked, dict[str, Any]]:
    """Every stage's ranked units per question and each question's Answer, from the whole
    pipeline run with the LabBench's stage cache (exactly the lists evaluate() measures)."""
    pipeline = bench.pipeline(config)
    ranked: Ranked = {}
    answers: dict[str, Any] = {}
    for q in questions:
        try:
            answer = pipeline.run(q.question)
        except QueryError:
            continue
        answers[q.id] = answer
        judgement = bench.judge.judge(q)
        for t in answer.trace:
            if t.hits:
                ranked.setdefault(t.name, {})[q.id] = judgement.ranked_units([h.chunk_id for h in t.hits])
    return ranked, answers


def means(ranked: Mapping[str, Sequence[str]], qrels: Qrels, names: Sequence[str]) -> dict[str, float]:
    """metric name -> its mean over the labelled questions (evaluate_run, then mean_of)."""
    return {n: mean_of(v) for n, v in evaluate_run(ranked, qrels, list(names)).items()}


# a page's settings ---------------------------------------------------------------------------

def number(params: Mapping[str, str], name: str, default: float, low: float, high: float,
           whole: bool = False) -> Any:
    """A numeric parameter in [low, high], or ConfigError saying what is expected."""
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    kind = "a whole number" if whole else "a number"
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        raise ConfigError(f"{name} = {raw[:40]!r} is not {kind}",
                          f"give {name} as {kind} from {low:g} to {high:g}") from None
    if not low <= value <= high or value != value:
        raise ConfigError(f"{name} = {raw[:40]} is out of range", f"give {name} from {low:g} to {high:g}")
    return value


def setting(params: Mapping[str, str], name: str, key: str, default: Any,
            cap: tuple[float, float] | None = None) -> Any:
    """A page parameter that is the setting `key`, parsed and checked by its one definition
    (config/sections.py), as the web form, a flag and a --config file are; `cap`: the narrower
    range an exhibit can compute in the time of a page, or ConfigError saying so."""
    raw = params.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = SETTINGS[key].parse(raw, f"the lab's {name}")
    if cap is not None and value is not None and not cap[0] <= value <= cap[1]:
        raise ConfigError(f"{name} = {raw[:40]} is outside what this exhibit computes",
                          f"give {name} from {cap[0]:g} to {cap[1]:g} here ({key} itself takes "
                          f"{SETTINGS[key].allowed()})")
    return value


def choice(params: Mapping[str, str], name: str, default: str, choices: Sequence[str]) -> str:
    """A parameter that is one of `choices`, or ConfigError listing them."""
    raw = params.get(name)
    if raw is None or raw == "":
        return default
    if raw not in choices:
        raise ConfigError(f"{name} = {raw[:40]!r} is not one of the choices", f"choose one of: {', '.join(choices)}")
    return raw
