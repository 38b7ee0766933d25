"""The pipeline's loop: analyse → retrievers side by side → the configured stages after them
(stages.py: fuse, versions, rerank, MMR, cap) → gate → budget → answer → read (→ generate).
Every stage meets one contract (glassrag/stage.py); the loop hands each the outputs of the
stages it reads, writes its StageTrace, and looks its output up in the stage cache when it has
one.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable

from glassrag import threads
from glassrag.config import Config
from glassrag.errors import QueryError
from glassrag.gate import answerability
from glassrag.gate import signals as gate_signals
from glassrag.gate.threshold import Gate, scoring_settings
from glassrag.lexical.bm25 import BM25
from glassrag.pipeline.stages import TABLES, ChunkDocs, ChunkTexts, after_retrieval
from glassrag.present import also_found_order
from glassrag.present.excerpt import best_sentence, window
from glassrag.present.highlight import answer_words, asks_for_a_name
from glassrag.query import Query
from glassrag.read.extractive import ExtractiveReader
from glassrag.retrieve import Retriever, available, check_retrievers, make_retriever
from glassrag.schema import RANKING_KINDS, Answer, Hit, Passage, Quote, StageTrace
from glassrag.stage import Stage, StageOutput
from glassrag.stage_cache import StageCache, digest
from glassrag.store.base import Index

MAX_QUESTION_CHARS = 4000


class Pipeline:
    """Built once per index and configuration; `run(question)` answers one question. With a
    `cache` (glassrag/stage_cache.py), a stage whose input and settings were seen before is
    looked up instead of run: the sweep shares one cache among the pipelines of its grid.
    `every_signal`: compute every gate signal, the answerability model's included, whether or
    not the calibrated gate reads it (calibration needs them all; an ask only the gate's)."""

    def __init__(self, index: Index, config: Config | None = None, cache: StageCache | None = None,
                 every_signal: bool = False) -> None:
        threads.configure()
        self.index = index
        self.cache = cache
        self.config = c = config or index.config
        r = c.retrieve
        check_retrievers(c, available(index.chunks.pg is not None, index.embeddings),
                         "the settings of this question")
        self.observed = [n for n in r.observe if n not in r.retrievers]
        self.notes: list[str] = []  # decisions taken when the pipeline was built, shown with analyze
        if self.observed and len(index.chunks) > r.observe_max_chunks:
            self.notes.append(f"observe skipped: {len(index.chunks):,} chunks is more than "
                              f"retrieve.observe_max_chunks ({r.observe_max_chunks:,}); "
                              f"{', '.join(self.observed)} not run")
            self.observed = []
        self.bm25 = BM25(index.counts, c.bm25.k1, c.bm25.b, index.bm25_weights(c.bm25.k1, c.bm25.b))
        self.retrievers: dict[str, Retriever] = {name: make_retriever(name, index, c, self.bm25)
                                                 for name in dict.fromkeys(r.retrievers + self.observed)}
        self._pool: ThreadPoolExecutor | None = None  # retrievers side by side, made once
        self._ids: dict[int, str] = {}  # id(stage) -> digest of its name, kind and params (cache keys)
        self.chunk_doc = ChunkDocs(index)
        self.steps, decided = after_retrieval(index, c, self.bm25)
        self.stages: list[Stage] = [step.stage for step in self.steps]
        self.notes.extend(decided)
        folder = answerability.model_folder(c.gate.answerability)
        self.answerability_model = answerability.model_digest(folder) if folder else None
        wanted = every_signal or (c.gate.enabled and answerability.read_by(index.extra.get("gate")))
        self.answerability = (answerability.Answerability(folder, c.gate.answerability_depth)
                              if folder and wanted else None)
        self.gate = Gate(index.extra.get("gate") if c.gate.enabled else None, self.scoring_settings())
        added = sorted({d for part in ("reranker", "gate") for d in (index.extra.get(part) or {}).get("added_since", [])})
        if added:  # kept by an ingest that only added documents (indexer.kept_trained_parts)
            self.notes.append(f"the reranker and the gate were fitted before {len(added)} document(s) were added "
                              f"({', '.join(added[:3])}{' …' if len(added) > 3 else ''}): their scores may shift a "
                              "little; glassrag rerank-train and glassrag calibrate refit them")
        self.budget: Stage = TABLES["budget"]["budget"].make(index, c, self.bm25)
        reader = index.extra.get("reader") or {}
        self.reader = ExtractiveReader(index.analyzer, float(reader.get("threshold", 0.5)))
        self.generator = None
        if c.generate.enabled:
            from glassrag.generate import Generator

            c.check_user_only()  # the backend URL an index names is never contacted

            self.generator = Generator(index, c.generate)

    def scoring_settings(self) -> dict[str, Any]:
        """The settings that shape the gate's signals (a calibration is valid for these only)."""
        used = next((s.params().get("method", s.name) for s in self.stages if s.kind == "rerank"), "none")
        return scoring_settings(self.config, self.index.extra.get("reranker"), used, self.answerability_model)

    def signals(self, query: Query, trace: list[StageTrace]) -> dict[str, float] | None:
        """The gate's candidate signals for one question (None when nothing matched)."""
        if not any(t.hits for t in trace if t.kind in ("retrieve", "fuse")):
            return None
        out = gate_signals.gather(trace, query.tokens, self.bm25, query.bm25_scores(self.bm25),
                                  self.index.position, self.config.answer.k)
        if self.answerability is not None:
            ranking = [t for t in trace if t.kind in RANKING_KINDS][-1]
            texts = ChunkTexts(self.index)
            out.update(answerability.signals(self.answerability.scores(
                query.question, [h.chunk_id for h in ranking.hits], texts.__getitem__)))
        return out

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
        if len(everything) > 1 and not caching:
            if self._pool is None:  # one pool for the pipeline's life, not one per question
                self._pool = ThreadPoolExecutor(max_workers=threads.pool_size(len(everything)),
                                                thread_name_prefix="glassrag-retrieve")
            ran = list(self._pool.map(lambda n: self._step(self.retrievers[n], query, {}, asked), everything))
        else:  # one retriever, or a cache (which attributes what each leaves in the query's cache)
            ran = [self._step(self.retrievers[n], query, {}, asked) for n in everything]
        key = digest("retrieved", self.bm25.params(), [k for _, _, k in ran]) if caching else None
        outputs = {t.name: out for t, out, _ in ran[: len(names)]}
        trace = [analyzed, *(t for t, _, _ in ran[: len(names)])]
        trace += [replace(t, kind="observe", notes=(*t.notes, "observed: traced and measured, not fused"))
                  for t, _, _ in ran[len(names):]]
        last = trace[1]
        for step in self.steps:
            reads = step.reads or (last.name,)
            last, outputs[step.stage.name], key = self._step(step.stage, query, {n: outputs[n] for n in reads}, key)
            trace.append(last)
        t0 = time.perf_counter()
        signals = self._signals(query, trace, key)
        declined, why = self.gate.decide(signals)
        trace.append(StageTrace("gate", "gate", {**self.gate.params(), "signals": signals or {}},
                                (last.name,), () if declined else last.hits, len(last.hits), _ms(t0),
                                ("declined: " + why if declined else "passed: " + why,)))
        packed, _, packed_key = self._step(self.budget, query, {last.name: outputs[last.name]}, key)
        trace.append(packed)
        answer = self._answer(query, packed, trace, declined, why, packed_key)
        return self._generate(answer, packed) if self.generator else answer

    def _signals(self, query: Query, trace: list[StageTrace], key: str | None) -> dict[str, float] | None:
        """The gate's signals, looked up in the cache by the key of the ranking it reads."""
        if self.cache is None or key is None:
            return self.signals(query, trace)
        reads = (self.answerability_model, self.config.gate.answerability_depth) if self.answerability else None
        return self._cached(self.cache.key(f"signals k={self.config.answer.k} answerability={reads}", key), query,
                            lambda: self.signals(query, trace))

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

    def _generate(self, answer: Answer, packed: StageTrace) -> Answer:
        """The generator writes from the packed passages, unless the gate declined."""
        assert self.generator is not None
        if answer.declined:
            skipped = StageTrace("generate", "generate", self.generator.params(), (packed.name,), (),
                                 len(packed.hits), 0.0, ("not generated: " + (answer.reason or "declined"),))
            return replace(answer, trace=(*answer.trace, skipped))
        generation, traced = self.generator.run(answer.question, packed.hits)
        return replace(answer, generation=generation, trace=(*answer.trace, traced))

    def _step(self, stage: Stage, query: Query, inputs: dict[str, StageOutput],
              key: str | None = None) -> tuple[StageTrace, StageOutput, str | None]:
        """Run one stage on the outputs of the stages it reads (or look its output up in the
        cache by its settings and `key`, the key of its input); returns its trace, its output and
        its own key. A stage that reads no stage (a retriever) reads the analysed question; the
        candidates it received are the chunks it searched, else the distinct chunks of its inputs."""
        t0 = time.perf_counter()
        if self.cache is None or key is None:
            output, own = stage.run(query, inputs), None
        else:
            own = self.cache.key(self._stage_id(stage), key)
            output = self._cached(own, query, lambda: stage.run(query, inputs))
        n_in = getattr(stage, "searched", None)
        if n_in is None:
            n_in = len({h.chunk_id for read in inputs.values() for h in read.hits})
        return StageTrace(stage.name, stage.kind, stage.params(), tuple(inputs) or ("analyze",), output.hits,
                          n_in, _ms(t0), output.notes), output, own

    def _stage_id(self, stage: Stage) -> str:
        if id(stage) not in self._ids:
            self._ids[id(stage)] = digest(stage.name, stage.kind, stage.params())
        return self._ids[id(stage)]

    def _answer(self, query: Query, packed: StageTrace, trace: list[StageTrace], declined: bool,
                why: str, key: str | None = None) -> Answer:
        t0 = time.perf_counter()
        k = self.config.answer.k
        terms = set(query.tokens)
        chosen = list(packed.hits[:k])

        def passages() -> list[Passage]:
            return [self.passage(h, rank, terms, query.question) for rank, h in enumerate(chosen, 1)]

        def read() -> Quote:
            return self.reader.read(terms, [(h.chunk_id, self.index.chunk(h.chunk_id).text)
                                            for h in packed.hits])

        cache = self.cache
        if cache is not None and key is not None:
            made, reading = passages, read
            shown_key = cache.key(f"passages k={k} excerpt={self.config.answer.excerpt_chars}", key)
            # the reader depends on the packed chunks, in order, and the question's terms only
            read_key = cache.key(f"read threshold={self.reader.threshold!r}", " ".join(sorted(terms)),
                                 *[h.chunk_id for h in packed.hits])
            passages = lambda: list(self._cached(shown_key, query, lambda: tuple(made())))  # noqa: E731
            read = lambda: self._cached(read_key, query, reading)  # noqa: E731
        shown_passages = passages()
        shown = () if declined else tuple(Hit(h.chunk_id, h.score, r, "answer")
                                          for r, h in enumerate(chosen, 1))
        notes = ["declined: the nearest passages are listed as such"] if declined and shown_passages else []
        trace.append(StageTrace("answer", "select", {"k": k}, (packed.name,), shown,
                                len(packed.hits), _ms(t0), tuple(notes)))
        t0 = time.perf_counter()
        quote = Quote("", "", 0.0, False, "not read: the gate declined") if declined else read()
        trace.append(StageTrace("read", "read", self.reader.params(), (packed.name,), (),
                                len(packed.hits), _ms(t0), (quote.why,)))
        if declined:
            reason = ("the documents do not appear to contain an answer (" + why + ")"
                      if shown_passages else "no passage matched any word of the question")
            return Answer(query.question, None, tuple(shown_passages), True, reason, tuple(trace), quote)
        if not shown_passages:
            return Answer(query.question, None, (), True, "no passage matched any word of the question",
                          tuple(trace), quote)
        first, rest = shown_passages[0], shown_passages[1:]
        rest = also_found_order(rest, lambda p: p.doc_id, first.doc_id)
        return Answer(query.question, first, tuple(rest), False, "", tuple(trace), quote)

    def passage(self, hit: Hit, rank: int, terms: set[str] | None = None, question: str = "") -> Passage:
        chunk = self.index.chunk(hit.chunk_id)
        doc = self.index.documents[chunk.doc_id]
        text = chunk.text
        if terms is None:
            return Passage(chunk.id, doc.id, doc.title, chunk.locator, text, hit.score, rank)
        if self.cache is None:
            start, end, marks = self._excerpt(text, terms, question)
        else:  # a chunk's excerpt for a question is the same whatever ranked it
            excerpt_key = self.cache.key(f"excerpt {self.config.answer.excerpt_chars}", " ".join(sorted(terms)),
                                         question, chunk.id)
            start, end, marks = self._cached(excerpt_key, Query(question, []),
                                             lambda: self._excerpt(text, terms, question))
        return Passage(chunk.id, doc.id, doc.title, chunk.locator, text, hit.score, rank,
                       text[start:end], start, marks)

    def _excerpt(self, text: str, terms: set[str], question: str) -> tuple[int, int, tuple[tuple[int, int], ...]]:
        """The window shown of a chunk around its best sentence, and the answer words marked in it."""
        analyze = self.index.analyzer
        a, b, _ = best_sentence(text, terms, analyze)
        start, end = window(text, a, self.config.answer.excerpt_chars)
        marks: tuple[tuple[int, int], ...] = ()
        if not asks_for_a_name(question):  # the run that answers, anywhere in the window shown
            marks = tuple((x - start, y - start) for x, y in answer_words(text, start, end, terms, analyze, question))
        return start, end, marks


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)
