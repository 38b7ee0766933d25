"""`ray-bm25`: BM25 over a sharded index (glassrag/shard/), each shard searched by its Ray actor
and the shards' top lists merged exactly on the driver; its hits and scores are the in-process
`bm25` retriever's over the index the shards were cut from, ties included.

It runs where an index is a sharded folder's catalogue (its part `shards`); `glassrag shard`
writes the catalogue with it in place of `bm25`. What it declares beside its list (every
chunk's score, for weighted fusion) is computed on the driver from the catalogue's counts, as
are the gate's lexical signals: only the search itself goes to the shards.
"""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.config import Config
from glassrag.errors import ConfigError, ShardError
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve.base import Ranks, corpus_scores, hits_of
from glassrag.retrieve.bm25 import BM25_SCORE
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, ScoreSource
from glassrag.store.base import Index

PART = "shards"


def is_sharded(index: Index) -> bool:
    """Whether `index` is a sharded folder's catalogue (where `ray-bm25` can run)."""
    return PART in index.parts


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "BM25", (f"{BM25_SCORE} Computed on {params.get('shards', 'several')} shards with the whole "
                    f"index's statistics: the same score as one index. {NOT_A_PROBABILITY}")


class ShardedBM25(Ranks):
    name = "ray-bm25"
    kind = Kind.RETRIEVE

    def __init__(self, index: Index, config: Config, bm25: BM25) -> None:
        if not is_sharded(index) or index.stored is None or index.stored.folder is None:
            raise ConfigError(f"retriever {self.name} searches a sharded index; this index is not one",
                              "shard it (glassrag shard --index DIR --shards 3 --out SHARDED) and ask "
                              "--index SHARDED, or drop ray-bm25 from [retrieve] retrievers and observe")
        self.index, self.bm25 = index, bm25
        self.shards = dict(index.parts[PART].params)
        self.folder = index.stored.folder.parent  # DIR/gen-… → DIR
        self.depth = config.retrieve.depth
        self.k1, self.b = config.bm25.k1, config.bm25.b
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "depth": self.depth, "family": "lexical",
                "shards": int(self.shards["shards"]), "served_by": "ray"}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        from glassrag.shard import serve

        try:
            rows, scores = serve.pool(self.folder, self.shards).search(query.tokens, self.depth, self.k1, self.b)
        except ShardError:
            serve.forget(self.folder, self.shards)
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
