"""The pipeline's loop: analyse → retrievers side by side → the configured list after them
(stages.py: fuse, versions, rerank, MMR, cap, gate, budget, answer, read, generate). Every
stage meets one contract (glassrag/stage.py); the loop hands each the outputs of the stages it
reads, writes its StageTrace, and looks its output up in the stage cache when it has one.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable, Sequence

from glassrag import threads
from glassrag.config import Config
from glassrag.errors import QueryError
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline.stages import ChunkDocs, configured, input_of
from glassrag.present.answer import answer_of
from glassrag.query import Query
from glassrag.retrieve import Retriever, check_retrievers, retrievers
from glassrag.schema import Answer, StageTrace
from glassrag.schema.kind import Kind
from glassrag.stage import Stage, StageOutput
from glassrag.stage_cache import StageCache, digest
from glassrag.store.base import Index

MAX_QUESTION_CHARS = 4000


class Pipeline:
    """Built once per index and configuration; `run(question)` answers one question. With a
    `cache` (glassrag/stage_cache.py), a stage whose input and settings were seen before is
    looked up instead of run: the sweep shares one cache among the pipelines of its grid.
    `every_signal`: compute every gate signal, the answerability model's included, whether or
    not the calibrated gate reads it (calibration needs them all; an ask only the gate's).
    `read_to_decide` (answering: `glassrag ask`, the web app; not with a cache, which keeps the
    gate's signals for other calibrations): the gate reads the answerability model only as far
    as its decision needs, and decides as it would reading every passage (gate/stage.py)."""

    def __init__(self, index: Index, config: Config | None = None, cache: StageCache | None = None,
                 every_signal: bool = False, read_to_decide: bool = False) -> None:
        threads.configure()
        self.index = index
        self.cache = cache
        self.config = c = config or index.config
        r = c.retrieve
        offers = retrievers(index)  # the index's table: every retriever it has, each made by its entry
        check_retrievers(c, offers, "the settings of this question")
        self.observed = [n for n in r.observe if n not in r.retrievers]
        self.notes: list[str] = []  # decisions taken when the pipeline was built, shown with analyze
        if self.observed and len(index.chunks) > r.observe_max_chunks:
            self.notes.append(f"observe skipped: {len(index.chunks):,} chunks is more than "
                              f"retrieve.observe_max_chunks ({r.observe_max_chunks:,}); "
                              f"{', '.join(self.observed)} not run")
            self.observed = []
        self.bm25 = BM25(index.counts, c.bm25.k1, c.bm25.b, index.bm25_weights(c.bm25.k1, c.bm25.b))
        self.retrievers: dict[str, Retriever] = {name: offers[name].make(index, c, self.bm25)
                                                 for name in dict.fromkeys(r.retrievers + self.observed)}
        self._pool: ThreadPoolExecutor | None = None  # retrievers side by side, made once
        self._ids: dict[int, str] = {}  # id(stage) -> digest of its name, kind and params (cache keys)
        self.chunk_doc = ChunkDocs(index)
        self.steps, decided = configured(index, c, self.bm25, every_signal, read_to_decide and cache is None)
        self.stages: list[Stage] = [step.stage for step in self.steps]
        self.notes.extend(decided)
        made = {step.stage.kind: step.stage for step in self.steps}
        self.gate: Any = made[Kind.GATE]  # the calibrated gate: its params, calibration and staleness are read
        self.budget, self.reader, self.generator = made[Kind.BUDGET], made[Kind.READ], made.get(Kind.GENERATE)
        added = sorted({d for part in ("reranker", "gate") for d in (index.extra.get(part) or {}).get("added_since", [])})
        if added:  # kept by an ingest that only added documents (indexer.kept_trained_parts)
            self.notes.append(f"the reranker and the gate were fitted before {len(added)} document(s) were added "
                              f"({', '.join(added[:3])}{' …' if len(added) > 3 else ''}): their scores may shift a "
                              "little; glassrag rerank-train and glassrag calibrate refit them")

    def input_of(self, kind: str) -> str:
        """The name of the trace's stage whose list a stage of `kind` reads in this pipeline,
        whether or not one runs here (stages.py `input_of`): `input_of("rerank")` is the list
        the reranker receives, which its training rows (evaluate/tune.py) and the lab read."""
        return input_of(self.steps, self.config.retrieve.retrievers[0], kind)

    def scoring_settings(self) -> dict[str, Any]:
        """The settings that shape the gate's signals (a calibration is valid for these only)."""
        return dict(self.gate.settings)

    # running ---------------------------------------------------------------------------

    def analyze(self, question: str) -> tuple[Query, StageTrace]:
        t0 = time.perf_counter()
        if not question or not question.strip():
            raise QueryError("the question is empty",
                             'type a question, e.g. glassrag ask "what does E-4107 mean?"')
        if len(question) > MAX_QUESTION_CHARS:
            raise QueryError(f"the question is {len(question)} characters long; the limit is "
                             f"{MAX_QUESTION_CHARS}", "ask a shorter question")
        analyzer = self.index.analyzer
        if self.cache is not None:
            tokens = self.cache.tokens(analyzer.params(), question, lambda: analyzer(question))
        else:
            tokens = analyzer(question)
        if not tokens:
            raise QueryError(
                f"nothing searchable is left of {question!r} after removing stopwords "
                f"({self.index.analyzer.stopwords} list)",
                "add the words that matter: a name, a code, a topic")
        trace = StageTrace("analyze", "analyze", analyzer.params(), (), (), 0, _ms(t0),
                           (f"tokens: {' '.join(tokens)}", *self.notes))
        return Query(question, tokens), trace

    def run(self, question: str) -> Answer:
        query, analyzed = self.analyze(question)
        caching = self.cache is not None
        asked = digest("question", question) if caching else None  # every retriever's input key
        names = self.config.retrieve.retrievers
        everything = names + self.observed
        workers = threads.pool_size(len(everything))  # one a retriever at most; one in the server
        if workers > 1 and not caching:
            if self._pool is None:  # one pool for the pipeline's life, not one per question
                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="glassrag-retrieve")
            ran = list(self._pool.map(lambda n: self._step(self.retrievers[n], query, {}, asked), everything))
        else:  # one retriever, the server, or a cache (which attributes what each leaves in the query's cache)
            ran = [self._step(self.retrievers[n], query, {}, asked) for n in everything]
        # which lists are fused belongs in the key: the same retrievers run, one of them observed here
        # and fused there, must not share a fusion
        key = digest("retrieved", self.bm25.params(), [k for _, _, k in ran], names) if caching else None
        outputs = {t.name: out for t, out, _ in ran[: len(names)]}
        trace = [analyzed, *(t for t, _, _ in ran[: len(names)])]
        trace += [replace(t, kind="observe", notes=(*t.notes, "observed: traced and measured, not fused"))
                  for t, _, _ in ran[len(names):]]
        last = trace[1].name
        for step in self.steps:  # each chains its cache key from the stage before it
            inputs = {n: outputs[n] for n in step.reads or (last,)}
            consulted = {n: outputs[n] for n in step.consults}
            reading = list(trace) if getattr(step.stage, "reads_trace", False) else None  # the gate's signals
            traced, outputs[step.stage.name], key = self._step(step.stage, query, inputs, key, consulted, reading)
            trace.append(traced)
            last = step.stage.name
        read, generated = outputs.get("read"), outputs.get("generate")
        return answer_of(query.question, outputs["answer"], trace, read.quote if read else None,
                         generated.generation if generated else None)

    def _cached(self, key: str, query: Query, compute: Callable[[], Any]) -> Any:
        """`compute()` once per key; what it left in the query's cache is kept and put back."""
        assert self.cache is not None
        found = self.cache.get(key)
        if found is not None:
            value, left = found
            query.restore(left)
            return value
        before = query.names()
        value = compute()
        self.cache.put(key, (value, query.entries(besides=before)))
        return value

    def _step(self, stage: Stage, query: Query, inputs: dict[str, StageOutput], key: str | None = None,
              consulted: dict[str, StageOutput] | None = None, trace: Sequence[StageTrace] | None = None
              ) -> tuple[StageTrace, StageOutput, str | None]:
        """Run one stage on the outputs of the stages it reads and consults (or look its output up
        in the cache by its settings and `key`, the key of the stage before it); returns its
        trace, its output and its own key. A stage that reads no stage (a retriever) reads the
        analysed question; the candidates it received are the chunks it searched, else the
        distinct chunks of the lists it read. A stage that reads the `trace` (the gate) has its
        measurement cached, not its decision, which is cheap and depends on its calibration whole."""
        t0 = time.perf_counter()
        given = {**inputs, **(consulted or {})}
        if trace is not None:
            output, own = self._decide(stage, query, given, key, trace)
        elif self.cache is None or key is None:
            output, own = stage.run(query, given), None
        else:
            own = self.cache.key(self._stage_id(stage), key)
            output = self._cached(own, query, lambda: stage.run(query, given))
        n_in = getattr(stage, "searched", None)
        if n_in is None:
            n_in = len({h.chunk_id for read in inputs.values() for h in read.hits})
        ms = max(0.0, _ms(t0) - output.setup_ms)
        return StageTrace(stage.name, stage.kind, {**stage.params(), **output.traced}, tuple(inputs) or ("analyze",),
                          output.hits, n_in, round(ms, 3), output.notes), output, own

    def _decide(self, stage: Any, query: Query, inputs: dict[str, StageOutput], key: str | None,
                trace: Sequence[StageTrace]) -> tuple[StageOutput, str | None]:
        """A trace-reading stage's output: its measurement (looked up by `measure_id()` and the key
        of the ranking it reads, which chains back through every stage of the trace), then its
        decision; its own key is that of its decision's outcome, so what follows is keyed on it."""
        if self.cache is None or key is None:
            return stage.decided(inputs, stage.measure(query, trace)), None
        measured = self._cached(self.cache.key(stage.measure_id(), key), query, lambda: stage.measure(query, trace))
        output = stage.decided(inputs, measured)
        return output, self.cache.key(digest("decided", *output.decision.outcome()), key)

    def _stage_id(self, stage: Stage) -> str:
        if id(stage) not in self._ids:
            made = getattr(stage, "cache_params", stage.params)()
            self._ids[id(stage)] = digest(stage.name, stage.kind, made)
        return self._ids[id(stage)]


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)
