"""The pipeline: analyse → retrievers side by side → fuse → prefer current versions →
rerank → MMR → cap → gate → budget → answer → read, each optional but the first two,
with a trace of every stage. The trace is the single record the CLI prints, the UI
draws and the evaluator reads; nothing is re-run to explain it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable, Iterator, Protocol

from glassrag import threads
from glassrag.config import Config
from glassrag.dense.base import normalize_rows
from glassrag.dense.exact import ExactCosine
from glassrag.errors import ConfigError, QueryError
from glassrag.fuse import Weighted, make_fuser
from glassrag.fuse.base import ScoreSource
from glassrag.gate import signals as gate_signals
from glassrag.gate.threshold import Gate, scoring_settings
from glassrag.lexical.bm25 import BM25, top_k
from glassrag.present import also_found_order
from glassrag.present.excerpt import best_sentence, window
from glassrag.present.highlight import answer_words, asks_for_a_name
from glassrag.query import Query
from glassrag.read.budget import Budget
from glassrag.read.extractive import ExtractiveReader
from glassrag.rerank.cap import DocumentCap
from glassrag.rerank.versions import MODES, PreferCurrent
from glassrag.schema import SCORING_KINDS, Answer, Hit, Passage, Quote, StageTrace
from glassrag.store.base import Index

RETRIEVERS = ("bm25", "lsa")
RERANKERS = ("none", "auto", "learned", "cross-encoder")
MAX_QUESTION_CHARS = 4000


class Stage(Protocol):
    """A stage after retrieval: reorders, filters or rescores a ranked list."""

    name: str
    kind: str

    def params(self) -> dict[str, Any]: ...

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]: ...


class Pipeline:
    """Built once per index and configuration; `run(question)` answers one question."""

    def __init__(self, index: Index, config: Config | None = None) -> None:
        threads.configure()
        self.index = index
        self.config = c = config or index.config
        r = c.retrieve
        available = (*RETRIEVERS, *index.embeddings)
        unknown = [n for n in r.retrievers + r.observe if n not in available]
        if unknown or not r.retrievers:
            raise ConfigError(f"unknown retriever(s) {unknown or '(none given)'}",
                              f"this index has: {', '.join(available)} (a neural retriever "
                              "exists when the index was built with --embedder)")
        self.observed = [n for n in r.observe if n not in r.retrievers]
        self.notes: list[str] = []  # decisions taken when the pipeline was built, shown with analyze
        if self.observed and len(index.chunks) > r.observe_max_chunks:
            self.notes.append(f"observe skipped: {len(index.chunks):,} chunks is more than "
                              f"retrieve.observe_max_chunks ({r.observe_max_chunks:,}); "
                              f"{', '.join(self.observed)} not run")
            self.observed = []
        if "lsa" in r.retrievers + self.observed and index.lsa is None:
            raise ConfigError("the configuration asks for lsa but this index has no LSA model",
                              "re-ingest with lsa among [retrieve] retrievers or observe, or drop it")
        self.bm25 = BM25(index.counts, c.bm25.k1, c.bm25.b, index.bm25_weights(c.bm25.k1, c.bm25.b))
        self._dense: ExactCosine | None = None  # LSA's unit vectors, made on first use
        self._pool: ThreadPoolExecutor | None = None  # retrievers side by side, made once
        self.neural: dict[str, tuple[Any, Any]] = {}  # name -> (embedder, search), built on first use
        depth = r.depth
        self.fuser = (make_fuser("rrf", k=c.fuse.k, depth=depth) if c.fuse.method == "rrf"
                      else make_fuser(c.fuse.method, weight=c.fuse.weight, depth=depth))
        self.chunk_doc = ChunkDocs(index)
        self.stages = self._after_retrieval()
        self.gate = Gate(index.extra.get("gate") if c.gate.enabled else None, self.scoring_settings())
        if c.answer.budget_words < 1:
            raise ConfigError(f"answer.budget_words must be at least 1, got {c.answer.budget_words}")
        if index.config.chunk.unit == "words" and c.answer.budget_words < index.config.chunk.size \
                and index.config.chunk.chunker != "document":
            raise ConfigError(
                f"a context budget of {c.answer.budget_words} words holds no whole chunk: this "
                f"index's chunks are up to {index.config.chunk.size} words",
                f"set [answer] budget_words to at least {index.config.chunk.size}")
        self.budget = Budget(c.answer.budget_words, index.chunk_words)
        reader = index.extra.get("reader") or {}
        self.reader = ExtractiveReader(index.analyzer, float(reader.get("threshold", 0.5)))
        self.generator = None
        if c.generate.enabled:
            from glassrag.generate import Generator

            self.generator = Generator(index, c.generate)

    @property
    def dense(self) -> ExactCosine | None:
        if self._dense is None and self.index.lsa is not None:
            self._dense = ExactCosine(self.index.lsa.passage_vectors)
        return self._dense

    # building ------------------------------------------------------------------------

    def _after_retrieval(self) -> list[Stage]:
        c, index = self.config, self.index
        stages: list[Stage] = []
        if c.versions.mode not in MODES:
            raise ConfigError(f"unknown versions.mode {c.versions.mode!r}", f"choose one of: {', '.join(MODES)}")
        if c.versions.mode != "off" and index.superseded():  # only where versions exist
            stages.append(PreferCurrent(None, self.chunk_doc, c.versions.mode, index.superseded()))
        if c.rerank.method not in RERANKERS:
            raise ConfigError(f"unknown rerank.method {c.rerank.method!r}",
                              f"choose one of: {', '.join(RERANKERS)}")
        method = c.rerank.method
        if method == "auto":
            method = "learned" if index.extra.get("reranker") else "none"
            self.notes.append("rerank auto: " + ("using the trained learned reranker" if method == "learned"
                                                 else "no reranker trained for this index (glassrag rerank-train)"))
        if method == "learned":
            model = index.extra.get("reranker")
            if model is None:
                raise ConfigError("the learned reranker has not been trained for this index",
                                  "train it first: glassrag rerank-train --index DIR --golden FILE")
            from glassrag.rerank.features import FeatureMaker
            from glassrag.rerank.learned import LearnedReranker

            stages.append(LearnedReranker(model, FeatureMaker(index, self.bm25), c.rerank.pool))
        elif method == "cross-encoder":
            from glassrag.rerank.cross_encoder import CrossEncoderReranker

            stages.append(CrossEncoderReranker(c.rerank.model, ChunkTexts(index),
                                               c.rerank.pool, c.rerank.blend))
        if c.mmr.relevance is not None:
            from glassrag.rerank.mmr import MMR, tfidf_rows

            stages.append(MMR(tfidf_rows(index.counts.tf), index.position, c.mmr.relevance, c.mmr.pool))
        if c.cap.per_document > 0:
            stages.append(DocumentCap(self.chunk_doc, c.cap.per_document))
        return stages

    def scoring_settings(self) -> dict[str, Any]:
        """The settings that shape the gate's signals (a calibration is valid for these only)."""
        used = next((s.params().get("method", s.name) for s in self.stages if s.kind == "rerank"), "none")
        return scoring_settings(self.config, self.index.extra.get("reranker"), used)

    def signals(self, query: Query, trace: list[StageTrace]) -> dict[str, float] | None:
        """The gate's candidate signals for one question (None when nothing matched)."""
        if not any(t.hits for t in trace if t.kind in ("retrieve", "fuse")):
            return None
        return gate_signals.gather(trace, query.tokens, self.bm25, query.bm25_scores(self.bm25),
                                   self.index.position, self.config.answer.k)

    # retrieval -------------------------------------------------------------------------

    def _bm25(self, query: Query) -> StageTrace:
        t0 = time.perf_counter()
        idx, scores = top_k(query.bm25_scores(self.bm25), self.config.retrieve.depth)
        hits = self._hits("bm25", idx, scores)
        missing = sorted({t for t in query.tokens if t not in self.index.counts.vocab})
        notes = (f"not in the index: {', '.join(missing)}",) if missing else ()
        return StageTrace("bm25", "retrieve", {**self.bm25.params(), "family": "lexical"},
                          ("analyze",), hits, len(self.index.chunks), _ms(t0), notes)

    def _lsa(self, query: Query) -> StageTrace:
        t0 = time.perf_counter()
        lsa, dense = self.index.lsa, self.dense
        assert lsa is not None and dense is not None
        vector = query.dense_vector("lsa", lambda: lsa.embed_tokens(query.tokens))
        idx, scores, removed = self._exact(query, "lsa", dense, vector, self.config.lsa.cutoff)
        notes = []
        if not vector.any():
            notes.append("no question word is in the LSA vocabulary: nothing to compare")
        if removed:
            notes.append(f"similarity cutoff {self.config.lsa.cutoff} removed {removed} hits")
        params = {**lsa.params(), "cutoff": self.config.lsa.cutoff, "family": "dense"}
        return StageTrace("lsa", "retrieve", params, ("analyze",), self._hits("lsa", idx, scores),
                          len(self.index.chunks), _ms(t0), tuple(notes))

    def _neural_parts(self, name: str) -> tuple[Any, Any]:
        if name not in self.neural:
            from glassrag.dense.neural import SentenceEmbedder

            emb = self.index.embeddings[name]
            p = emb.params
            embedder = SentenceEmbedder(p["model"], p["query_instruction"], p["passage_instruction"],
                                        p["quantize"], p["batch_size"], p.get("max_seq_length"))
            if self.config.neural.search == "hnsw":
                from glassrag.dense.ann import HNSWCosine

                search: Any = HNSWCosine(emb.vectors)
            elif self.config.neural.search == "exact":
                search = ExactCosine(emb.vectors)
            else:
                raise ConfigError(f"unknown neural.search {self.config.neural.search!r}",
                                  "choose one of: exact, hnsw")
            self.neural[name] = (embedder, search)
        return self.neural[name]

    def _neural(self, name: str, query: Query) -> StageTrace:
        t0 = time.perf_counter()
        embedder, search = self._neural_parts(name)
        first = embedder._model is None
        vector = query.dense_vector(name, lambda: embedder.embed_query(query.question))
        cutoff = self.config.neural.cutoff
        from glassrag.dense.neural import one_blas_thread

        with one_blas_thread():
            if isinstance(search, ExactCosine):
                idx, scores, removed = self._exact(query, name, search, vector, cutoff)
            else:
                idx, scores, removed = search.search(vector, self.config.retrieve.depth, cutoff)
        notes = [f"query instruction {embedder.query_instruction!r} ({embedder.family})",
                 *embedder.warnings()]
        if removed:
            notes.append(f"similarity cutoff {cutoff} removed {removed} hits")
        if first and embedder.load_ms is not None:
            notes.append(f"the model was loaded for this first question: {embedder.load_ms:.0f} ms "
                         "of the time shown (a running server loads it once)")
        params = {**embedder.params(), "cutoff": cutoff, "search": self.config.neural.search,
                  "family": "dense"}
        return StageTrace(name, "retrieve", params, ("analyze",), self._hits(name, idx, scores),
                          len(self.index.chunks), _ms(t0), tuple(notes))

    def _exact(self, query: Query, name: str, search: ExactCosine, vector: Any,
               cutoff: float | None) -> tuple[Any, Any, int]:
        """The top `depth` of every chunk's cosine, kept in the query's cache (as `sims:NAME`)
        for fusion to read; a zero question vector (no known word) compares with nothing."""
        sims = query.cached(f"sims:{name}", lambda: search.similarities(vector))
        return search.top(sims if vector.any() else sims[:0], self.config.retrieve.depth, cutoff)

    def _hits(self, stage: str, idx: Any, scores: Any) -> tuple[Hit, ...]:
        chunk_id = self.index.chunk_id
        return tuple(Hit(chunk_id(i), float(s), r, stage)
                     for r, (i, s) in enumerate(zip(idx.tolist(), scores.tolist()), 1))

    def _source(self, name: str, query: Query) -> ScoreSource:
        """Retriever `name`'s score of any chunk for this question, and its corpus-wide range."""
        position = self.index.position
        if name == "bm25":
            full = query.bm25_scores(self.bm25)
        else:
            full = query.peek(f"sims:{name}")
            if full is None:  # an approximate index: exact cosines of the asked chunks only
                _, search = self._neural_parts(name)
                q = normalize_rows(query.peek(f"dense:{name}").reshape(1, -1))[0]
                return ScoreSource(lambda ids: search.vectors[[position[c] for c in ids]] @ q,
                                   whole_corpus=False)
        low, high = (float(full.min()), float(full.max())) if full.size else (0.0, 0.0)
        return ScoreSource(lambda ids: full[[position[c] for c in ids]], low, high)

    def _fuse(self, retrieved: list[StageTrace], query: Query) -> StageTrace:
        t0 = time.perf_counter()
        inputs = {t.name: list(t.hits) for t in retrieved}
        if isinstance(self.fuser, Weighted):
            hits = self.fuser.fuse(inputs, {t.name: self._source(t.name, query) for t in retrieved})
        else:
            hits = self.fuser.fuse(inputs)
        n_in = len({h.chunk_id for t in retrieved for h in t.hits[: self.config.retrieve.depth]})
        return StageTrace("fuse", "fuse", self.fuser.params(), tuple(t.name for t in retrieved),
                          tuple(hits), n_in, _ms(t0))

    # running ---------------------------------------------------------------------------

    def analyze(self, question: str) -> tuple[Query, StageTrace]:
        t0 = time.perf_counter()
        if not question or not question.strip():
            raise QueryError("the question is empty",
                             'type a question, e.g. glassrag ask "what does E-4107 mean?"')
        if len(question) > MAX_QUESTION_CHARS:
            raise QueryError(f"the question is {len(question)} characters long; the limit is "
                             f"{MAX_QUESTION_CHARS}", "ask a shorter question")
        tokens = self.index.analyzer(question)
        if not tokens:
            raise QueryError(
                f"nothing searchable is left of {question!r} after removing stopwords "
                f"({self.index.analyzer.stopwords} list)",
                "add the words that matter: a name, a code, a topic")
        trace = StageTrace("analyze", "analyze", self.index.analyzer.params(), (), (), 0, _ms(t0),
                           (f"tokens: {' '.join(tokens)}", *self.notes))
        return Query(question, tokens), trace

    def run(self, question: str) -> Answer:
        query, analyzed = self.analyze(question)
        stages: dict[str, Callable[[Query], StageTrace]] = {"bm25": self._bm25, "lsa": self._lsa}
        for name in self.index.embeddings:
            stages[name] = lambda q, name=name: self._neural(name, q)
        names = self.config.retrieve.retrievers
        everything = names + self.observed
        if len(everything) > 1:
            if self._pool is None:  # one pool for the pipeline's life, not one per question
                self._pool = ThreadPoolExecutor(max_workers=len(everything),
                                                thread_name_prefix="glassrag-retrieve")
            ran = list(self._pool.map(lambda n: stages[n](query), everything))
        else:
            ran = [stages[names[0]](query)]
        retrieved = ran[: len(names)]
        observed = [replace(t, kind="observe", notes=(*t.notes, "observed: traced and measured, not fused"))
                    for t in ran[len(names):]]
        trace = [analyzed, *retrieved, *observed]
        last = retrieved[0]
        if len(retrieved) > 1:
            last = self._fuse(retrieved, query)
            trace.append(last)
        for stage in self.stages:
            last = self._step(stage, query, last)
            trace.append(last)
        t0 = time.perf_counter()
        signals = self.signals(query, trace)
        declined, why = self.gate.decide(signals)
        trace.append(StageTrace("gate", "gate", {**self.gate.params(), "signals": signals or {}},
                                (last.name,), () if declined else last.hits, len(last.hits), _ms(t0),
                                ("declined: " + why if declined else "passed: " + why,)))
        packed = self._step(self.budget, query, last)
        trace.append(packed)
        answer = self._answer(query, packed, trace, declined, why)
        return self._generate(answer, packed) if self.generator else answer

    def _generate(self, answer: Answer, packed: StageTrace) -> Answer:
        """The generator writes from the packed passages, unless the gate declined."""
        assert self.generator is not None
        if answer.declined:
            skipped = StageTrace("generate", "generate", self.generator.params(), (packed.name,), (),
                                 len(packed.hits), 0.0, ("not generated: " + (answer.reason or "declined"),))
            return replace(answer, trace=(*answer.trace, skipped))
        generation, traced = self.generator.run(answer.question, packed.hits)
        return replace(answer, generation=generation, trace=(*answer.trace, traced))

    def _step(self, stage: Stage, query: Query, previous: StageTrace) -> StageTrace:
        t0 = time.perf_counter()
        hits, notes = stage.apply(query, list(previous.hits))
        return StageTrace(stage.name, stage.kind, stage.params(), (previous.name,), tuple(hits),
                          len(previous.hits), _ms(t0), tuple(notes))

    def _answer(self, query: Query, packed: StageTrace, trace: list[StageTrace], declined: bool,
                why: str) -> Answer:
        t0 = time.perf_counter()
        k = self.config.answer.k
        terms = set(query.tokens)
        chosen = list(packed.hits[:k])
        passages = [self.passage(h, rank, terms, query.question) for rank, h in enumerate(chosen, 1)]
        shown = () if declined else tuple(Hit(h.chunk_id, h.score, r, "answer")
                                          for r, h in enumerate(chosen, 1))
        notes = ["declined: the nearest passages are listed as such"] if declined and passages else []
        trace.append(StageTrace("answer", "select", {"k": k}, (packed.name,), shown,
                                len(packed.hits), _ms(t0), tuple(notes)))
        t0 = time.perf_counter()
        if declined:
            quote = Quote("", "", 0.0, False, "not read: the gate declined")
        else:
            quote = self.reader.read(terms, [(h.chunk_id, self.index.chunk(h.chunk_id).text)
                                             for h in packed.hits])
        trace.append(StageTrace("read", "read", self.reader.params(), (packed.name,), (),
                                len(packed.hits), _ms(t0), (quote.why,)))
        if declined:
            reason = ("the documents do not appear to contain an answer (" + why + ")"
                      if passages else "no passage matched any word of the question")
            return Answer(query.question, None, tuple(passages), True, reason, tuple(trace), quote)
        if not passages:
            return Answer(query.question, None, (), True, "no passage matched any word of the question",
                          tuple(trace), quote)
        first, rest = passages[0], passages[1:]
        rest = also_found_order(rest, lambda p: p.doc_id, first.doc_id)
        return Answer(query.question, first, tuple(rest), False, "", tuple(trace), quote)

    def passage(self, hit: Hit, rank: int, terms: set[str] | None = None, question: str = "") -> Passage:
        chunk = self.index.chunk(hit.chunk_id)
        doc = self.index.documents[chunk.doc_id]
        text = chunk.text
        if terms is None:
            return Passage(chunk.id, doc.id, doc.title, chunk.locator, text, hit.score, rank)
        analyze = self.index.analyzer
        a, b, _ = best_sentence(text, terms, analyze)
        start, end = window(text, a, self.config.answer.excerpt_chars)
        marks: tuple[tuple[int, int], ...] = ()
        if not asks_for_a_name(question):
            lo, hi = max(a, start), min(b, end)
            marks = tuple((x - start, y - start) for x, y in answer_words(text, lo, hi, terms, analyze))
        return Passage(chunk.id, doc.id, doc.title, chunk.locator, text, hit.score, rank,
                       text[start:end], start, marks)


class ChunkDocs(Mapping[str, str]):
    """chunk id -> document id, looked up when asked (no per-chunk map is built)."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def __getitem__(self, chunk_id: str) -> str:
        return self.index.chunk(chunk_id).doc_id

    def __iter__(self) -> Iterator[str]:
        return iter(self.index.position)

    def __len__(self) -> int:
        return len(self.index.chunks)


class ChunkTexts(ChunkDocs):
    """chunk id -> its text, read when asked."""

    def __getitem__(self, chunk_id: str) -> str:  # type: ignore[override]
        return self.index.chunk(chunk_id).text


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)
