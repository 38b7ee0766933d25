"""`ray-bm25`: BM25 over a sharded index (glassrag/shard/), each shard searched by its Ray actor
and the shards' top lists merged exactly on the driver; its hits and scores are the in-process
`bm25` retriever's over the index the shards were cut from, ties included.

`ray-NAME`: the dense retriever of embedder NAME over the shards: the question is embedded once
on the driver, each shard returns its exact top `depth` by cosine over its rows of NAME's
vectors, and the driver merges them and applies neural.cutoff, as the in-process NAME retriever
does over the whole index (cosines equal to the last bit or so: glassrag/shard/serve.py).

They run where an index is a sharded folder's catalogue (its part `shards`); `glassrag shard`
writes the catalogue with them in place of `bm25` and NAME. What `ray-bm25` declares beside its
list (every chunk's score, for weighted fusion) is computed on the driver from the catalogue's
counts, as are the gate's lexical signals; `ray-NAME` declares the cosine of the chunks asked
about, from the catalogue's vectors, ranged over the whole corpus by the shards' lowest and
highest cosines: only the search itself goes to the shards.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glassrag.config import Config
from glassrag.dense.base import normalize_rows
from glassrag.errors import ConfigError, ShardError
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve.base import Ranks, corpus_scores, hits_of
from glassrag.retrieve.bm25 import BM25_SCORE
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, Entry, ScoreSource
from glassrag.store.base import Index

PART = "shards"
PREFIX = "ray-"  # ray-NAME: embedder NAME's dense search on the shards (glassrag/shard/build.py RAY_PREFIX)


def is_sharded(index: Index) -> bool:
    """Whether `index` is a sharded folder's catalogue (where `ray-bm25` can run)."""
    return PART in index.parts


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "BM25", (f"{BM25_SCORE} Computed on {params.get('shards', 'several')} shards with the whole "
                    f"index's statistics: the same score as one index. {NOT_A_PROBABILITY}")


def dense_name(embedder: str) -> str:
    """The sharded retriever of `embedder`'s vectors."""
    return PREFIX + embedder


def embedder_of(name: str) -> str | None:
    """The embedder that retriever `name` searches on the shards; None when `name` is not ray-NAME."""
    return name[len(PREFIX):] if name.startswith(PREFIX) and name != "ray-bm25" else None


def describe_dense_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "dense", (f"Cosine similarity of {embedder_of(name) or name} vectors (−1 to 1): closeness of meaning to "
                     f"the question, computed on {params.get('shards', 'several')} shards, each chunk's own "
                     f"cosine as in one index. {NOT_A_PROBABILITY}")


def dense_entry(embedder: str) -> Entry:
    """The table entry of ray-`embedder` (one per embedder an index has, as for the in-process
    neural retrievers)."""
    return Entry(lambda index, config, bm25=None: ShardedDense(index, config, embedder), describe_dense_score,
                 is_sharded, term="dense")


class OnShards:
    """What both sharded retrievers read of a catalogue: its shards' folder and sharding."""

    name: str

    def on_shards(self, index: Index) -> None:
        if not is_sharded(index) or index.stored is None or index.stored.folder is None:
            raise ConfigError(f"retriever {self.name} searches a sharded index; this index is not one",
                              "shard it (glassrag shard --index DIR --shards 3 --out SHARDED) and ask "
                              f"--index SHARDED, or drop {self.name} from [retrieve] retrievers and observe")
        self.shards = dict(index.parts[PART].params)
        self.folder = index.stored.folder.parent  # DIR/gen-… → DIR

    def pool(self) -> Any:
        from glassrag.shard import serve

        return serve.pool(self.folder, self.shards)

    def failed(self) -> None:
        """After a ShardError: the next question starts new actors."""
        from glassrag.shard import serve

        serve.forget(self.folder, self.shards)


class ShardedBM25(Ranks, OnShards):
    name = "ray-bm25"
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25) -> None:
        self.on_shards(index)
        self.index, self.bm25 = index, bm25
        self.depth = config.retrieve.depth
        self.k1, self.b = config.bm25.k1, config.bm25.b
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "depth": self.depth, "family": "lexical",
                "shards": int(self.shards["shards"]), "served_by": "ray"}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        try:
            rows, scores = self.pool().search(query.tokens, self.depth, self.k1, self.b)
        except ShardError:
            self.failed()
            raise
        missing = sorted({t for t in query.tokens if t not in self.index.counts.vocab})
        notes = [f"{self.shards['shards']} shards searched on Ray, their top {self.depth} merged exactly"]
        if missing:
            notes.append(f"not in the index: {', '.join(missing)}")
        return hits_of(self.index, self.name, rows, scores), notes

    def score_source(self, query: Query) -> ScoreSource:
        """Every chunk's BM25 score for the question, from the catalogue on the driver (the same
        numbers the shards compute)."""
        return corpus_scores(self.index, query.bm25_scores(self.bm25))


class ShardedDense(Ranks, OnShards):
    """Embedder `embedder`'s exact cosine search, on the shards; the question is embedded here."""

    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, embedder: str) -> None:
        self.name = dense_name(embedder)
        self.on_shards(index)
        if embedder not in index.embeddings:
            raise ConfigError(f"retriever {self.name}: this index has no vectors of embedder {embedder!r}",
                              f"its embedders: {', '.join(index.embeddings) or 'none'} (ingest with --embedder "
                              f"{embedder}, then shard it again)")
        self.index, self.embedder_name = index, embedder
        self.embedding = index.embeddings[embedder]
        self.depth, self.cutoff = config.retrieve.depth, config.neural.cutoff
        self.query_instruction = config.neural.query_instruction  # "auto": the index's own
        self.asked_search = config.neural.search  # the shards search exactly, whatever it says
        self.searched = len(index.chunks)
        self._embedder: Any = None

    def embedder(self) -> Any:
        if self._embedder is None:
            from glassrag.dense.neural import SentenceEmbedder

            params = dict(self.embedding.params)
            if self.query_instruction != "auto":
                params["query_instruction"] = self.query_instruction
            self._embedder = SentenceEmbedder.from_params(params)
        return self._embedder

    def params(self) -> dict[str, Any]:
        return {**self.embedder().params(), "cutoff": self.cutoff, "search": "exact", "depth": self.depth,
                "family": "dense", "shards": int(self.shards["shards"]), "served_by": "ray"}

    def vector(self, query: Query) -> np.ndarray:
        """The question's vector, shared with the in-process retriever of the same embedder."""
        embedder = self.embedder()
        return query.dense_vector(self.embedder_name, lambda: embedder.embed_query(query.question))

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        embedder = self.embedder()
        vector = np.asarray(self.vector(query), dtype=np.float32)
        try:
            rows, scores, low, high = self.pool().dense(self.embedder_name, vector, self.depth)
        except ShardError:
            self.failed()
            raise
        query.cached(f"range:{self.name}", lambda: (low, high))
        removed = 0
        if self.cutoff is not None:  # after the merge, as the whole index applies it after its top k
            keep = scores >= self.cutoff
            removed = int((~keep).sum())
            rows, scores = rows[keep], scores[keep]
        notes = [f"{self.shards['shards']} shards searched on Ray, their top {self.depth} by cosine merged exactly",
                 f"query instruction {embedder.query_instruction!r} ({embedder.family})", *embedder.warnings()]
        if removed:
            notes.append(f"similarity cutoff {self.cutoff} removed {removed} hits")
        if self.asked_search != "exact":
            notes.append(f"neural.search {self.asked_search}: the shards search exactly (no HNSW index per shard)")
        return hits_of(self.index, self.name, rows, scores), notes

    def score_source(self, query: Query) -> ScoreSource:
        """The cosine of any chunk asked about, from the catalogue's vectors on the driver, with
        the corpus-wide range the shards reported for this question (called after `apply`)."""
        low, high = query.cached(f"range:{self.name}", lambda: (0.0, 0.0))
        vectors, position = self.embedding.vectors, self.index.position
        q = normalize_rows(self.vector(query).reshape(1, -1))[0]

        def cosine(ids: Any) -> np.ndarray:
            cosines: np.ndarray = normalize_rows(np.asarray(vectors[[position[c] for c in ids]], dtype=np.float32)) @ q
            return cosines

        return ScoreSource(cosine, low, high)
