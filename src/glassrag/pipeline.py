"""The pipeline: analyse → retrievers side by side → fuse → answer, with a trace of
every stage. The trace is the single record the CLI prints, the UI draws and the
evaluator reads; nothing is re-run to explain it.
"""

from __future__ import annotations

import time
from dataclasses import replace
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

from glassrag.config import Config
from glassrag.dense.exact import ExactCosine
from glassrag.errors import ConfigError, QueryError
from glassrag.fuse import make_fuser
from glassrag.lexical.bm25 import BM25
from glassrag.schema import Answer, Hit, Passage, StageTrace
from glassrag.store.base import Index

RETRIEVERS = ("bm25", "lsa")
MAX_QUESTION_CHARS = 4000


class Pipeline:
    """Built once per index and configuration; `run(question)` answers one question."""

    def __init__(self, index: Index, config: Config | None = None) -> None:
        self.index = index
        self.config = config or index.config
        r = self.config.retrieve
        unknown = [n for n in r.retrievers + r.observe if n not in RETRIEVERS]
        if unknown or not r.retrievers:
            raise ConfigError(f"unknown retriever(s) {unknown or '(none given)'}",
                              f"choose from: {', '.join(RETRIEVERS)}")
        self.observed = [n for n in r.observe if n not in r.retrievers]
        if "lsa" in r.retrievers + self.observed and index.lsa is None:
            raise ConfigError("the configuration asks for lsa but this index has no LSA model",
                              "re-ingest with lsa among [retrieve] retrievers or observe, or drop it")
        self.bm25 = BM25(index.counts, self.config.bm25.k1, self.config.bm25.b)
        self.dense = ExactCosine(index.lsa.passage_vectors) if index.lsa is not None else None
        f = self.config.fuse
        depth = self.config.retrieve.depth
        self.fuser = (make_fuser("rrf", k=f.k, depth=depth) if f.method == "rrf"
                      else make_fuser(f.method, weight=f.weight, depth=depth))

    # stages ------------------------------------------------------------------------------

    def _bm25(self, tokens: list[str]) -> StageTrace:
        t0 = time.perf_counter()
        idx, scores = self.bm25.search(tokens, self.config.retrieve.depth)
        hits = self._hits("bm25", idx, scores)
        missing = sorted({t for t in tokens if t not in self.index.counts.vocab})
        notes = (f"not in the index: {', '.join(missing)}",) if missing else ()
        return StageTrace("bm25", "retrieve", {**self.bm25.params(), "family": "lexical"}, ("analyze",), hits,
                          len(self.index.chunks), _ms(t0), notes)

    def _lsa(self, tokens: list[str]) -> StageTrace:
        t0 = time.perf_counter()
        assert self.index.lsa is not None and self.dense is not None
        query = self.index.lsa.embed_tokens(tokens)
        idx, scores, removed = self.dense.search(query, self.config.retrieve.depth,
                                                 self.config.lsa.cutoff)
        hits = self._hits("lsa", idx, scores)
        notes = []
        if not query.any():
            notes.append("no question word is in the LSA vocabulary: nothing to compare")
        if removed:
            notes.append(f"similarity cutoff {self.config.lsa.cutoff} removed {removed} hits")
        params = {**self.index.lsa.params(), "cutoff": self.config.lsa.cutoff, "family": "dense"}
        return StageTrace("lsa", "retrieve", params, ("analyze",), hits,
                          len(self.index.chunks), _ms(t0), tuple(notes))

    def _hits(self, stage: str, idx: Any, scores: Any) -> tuple[Hit, ...]:
        chunks = self.index.chunks
        return tuple(Hit(chunks[i].id, float(s), r, stage)
                     for r, (i, s) in enumerate(zip(idx.tolist(), scores.tolist()), 1))

    def _fuse(self, retrieved: list[StageTrace]) -> StageTrace:
        t0 = time.perf_counter()
        hits = self.fuser.fuse({t.name: list(t.hits) for t in retrieved})
        n_in = len({h.chunk_id for t in retrieved for h in t.hits[: self.config.retrieve.depth]})
        return StageTrace("fuse", "fuse", self.fuser.params(), tuple(t.name for t in retrieved),
                          tuple(hits), n_in, _ms(t0))

    # running ------------------------------------------------------------------------------

    def analyze(self, question: str) -> tuple[list[str], StageTrace]:
        t0 = time.perf_counter()
        if not question or not question.strip():
            raise QueryError("the question is empty", "type a question, e.g. glassrag ask \"what does E-4107 mean?\"")
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
                           (f"tokens: {' '.join(tokens)}",))
        return tokens, trace

    def run(self, question: str) -> Answer:
        tokens, analyzed = self.analyze(question)
        stages: dict[str, Callable[[list[str]], StageTrace]] = {"bm25": self._bm25, "lsa": self._lsa}
        names = self.config.retrieve.retrievers
        everything = names + self.observed
        if len(everything) > 1:
            with ThreadPoolExecutor(max_workers=len(everything)) as pool:
                ran = list(pool.map(lambda n: stages[n](tokens), everything))
        else:
            ran = [stages[names[0]](tokens)]
        retrieved = ran[: len(names)]
        observed = [replace(t, kind="observe", notes=(*t.notes, "observed: traced and measured, not fused"))
                    for t in ran[len(names):]]
        trace = [analyzed, *retrieved, *observed]
        final = retrieved[0]
        if len(retrieved) > 1:
            final = self._fuse(retrieved)
            trace.append(final)
        return self._answer(question, final, trace)

    def _answer(self, question: str, final: StageTrace, trace: list[StageTrace]) -> Answer:
        t0 = time.perf_counter()
        k = self.config.answer.k
        chosen = final.hits[:k]
        passages = tuple(self.passage(h, rank) for rank, h in enumerate(chosen, 1))
        shown = tuple(Hit(h.chunk_id, h.score, rank, "answer") for rank, h in enumerate(chosen, 1))
        trace.append(StageTrace("answer", "select", {"k": k}, (final.name,), shown,
                                len(final.hits), _ms(t0)))
        if not passages:
            return Answer(question, None, (), True, "no passage matched any word of the question",
                          tuple(trace))
        return Answer(question, passages[0], passages[1:], False, "", tuple(trace))

    def passage(self, hit: Hit, rank: int) -> Passage:
        chunk = self.index.chunk(hit.chunk_id)
        doc = self.index.documents[chunk.doc_id]
        return Passage(chunk.id, doc.id, doc.title, chunk.locator, chunk.text, hit.score, rank)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000.0, 3)
