"""Retrievers that search an index in PostgreSQL in SQL (glassrag/store/pgsearch.py holds the
SQL and the formulas), traced and evaluated like any other stage:

    pg-bm25          BM25 from the postings' stored impacts: PostgreSQL picks the impact-ordered
                     blocks a question needs and looks up the rest, the client sums them (exact,
                     equal to glassrag's bm25; store/pgprune.py);
                     at a k1 or b other than the index's, the formula over every posting
    pg-dense         exact cosine in pgvector over an embedder's vectors
    pg-hnsw          the same through pgvector's HNSW index (ef_search)
    pg-fulltext      PostgreSQL full text: websearch_to_tsquery (every word), ts_rank_cd
    pg-fulltext-or   the same with the question's words ORed
    pg-hybrid        the common SQL hybrid: full text + pgvector (cosine ≥ cutoff) fused by RRF
                     in one CTE

Each opens its own connection on first use (retrievers run side by side in threads). They are
entries of the same shape as every retriever's (`ENTRIES`), in the table of an index in
PostgreSQL only (retrieve/__init__.py `table`); the three that embed the question run only
where this install can run the embedder that made the index's vectors.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, TypeVar

import numpy as np

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.retrieve.base import Ranks
from glassrag.retrieve.neural import refusal
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, Entry
from glassrag.store import pgsearch
from glassrag.store.pgcheck import an_object, damaged, retried
from glassrag.store.pgschema import IDENTIFIER, TEXT_SEARCH
from glassrag.store.base import Index


def in_postgres(index: Index) -> bool:
    """Whether `index` is stored in PostgreSQL (the pg-* retrievers search it in SQL)."""
    return index.chunks.pg is not None


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    """What a pg-* retriever's score is, by the SQL it runs (its `family` and `rank` params);
    its glossary term is its class's (`term`)."""
    term, text = _score(params)
    return (ENTRIES[name].term if name in ENTRIES else term), f"{text} {NOT_A_PROBABILITY}"


def _score(params: Mapping[str, Any]) -> tuple[str, str]:
    if params.get("fuse") == "rrf":
        return "RRF", (f"Reciprocal rank fusion in SQL of PostgreSQL full text and pgvector, Σ 1/({params.get('k', 60)} "
                       "+ rank): it reflects ranks only.")
    if params.get("rank") == "ts_rank_cd":
        return "", ("PostgreSQL full-text rank (ts_rank_cd: how often and how close together the question's "
                    "words occur in this passage). Unbounded: compare it within one question.")
    if params.get("family") == "dense":
        return "dense", (f"Cosine similarity of {params.get('embedder', 'embedder')} vectors in pgvector "
                         "(−1 to 1): closeness of meaning to the question.")
    return "BM25", ("BM25 match strength computed in SQL: the sum of each question word's weight in this "
                    "passage. Unbounded, on this index's scale: compare it within one question.")


T = TypeVar("T")


class _PgRetriever(Ranks):
    kind = Kind.RETRIEVE
    name = "pg"
    family = "lexical"
    term = "BM25"  # the glossary term of its score (TERMS in glassrag/web/glossary.py)

    @staticmethod
    def runs_on(index: Index) -> bool:
        """Where it can run (its table entry's `available`): an index in PostgreSQL."""
        return in_postgres(index)

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        self.store = index.chunks.pg
        if not in_postgres(index):
            raise ConfigError(f"retriever {self.name} searches an index in PostgreSQL; this index is a folder",
                              "ingest into PostgreSQL (glassrag ingest PATH --store postgresql://…), "
                              "or drop it from [retrieve] retrievers and observe")
        self.index, self.config = index, config
        self.depth = config.retrieve.depth
        self.searched = len(index.chunks)
        self._conn: Any = None

    @property
    def conn(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = self.store.new_connection()
        return self._conn

    def sql(self, work: Callable[[Any], T]) -> T:
        """`work(self.conn)`, once more on a fresh connection when this one died (the server
        restarted); StoreError (a 503 page) while the server cannot be reached."""
        return retried(lambda: self.conn, work, self.store.loc, "searching")

    def params(self) -> dict[str, Any]:
        return {"depth": self.depth, "family": self.family, "store": "postgresql"}

    def hits(self, rows: list[tuple[str, float]]) -> list[Hit]:
        return [Hit(cid, float(score), rank, self.name) for rank, (cid, score) in enumerate(rows, 1)]

    def ranked(self, query: Query, rows: list[tuple[str, float]]) -> list[Hit]:
        """The hits; weighted fusion reads their scores (retrieve/base.py listed_scores: a chunk
        below `depth` gets the list's lowest score, a bound, as SQL scored only the top)."""
        return self.hits(rows)


class PgBM25(_PgRetriever):
    name = "pg-bm25"

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        super().__init__(index, config, bm25)
        self.k1, self.b = config.bm25.k1, config.bm25.b

    def params(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, **super().params()}

    def impacts(self) -> dict[str, float] | None:
        """The k1 and b the index's stored impacts hold for (None: written before impacts)."""
        sql = f"SELECT value FROM {self.store.loc.table('meta')} WHERE key = 'impacts'"
        row = self.sql(lambda conn: conn.execute(sql).fetchone())
        if row is None:
            return None
        impacts = an_object(self.store.loc, "meta/impacts", row[0])
        if not all(isinstance(impacts.get(k), (int, float)) for k in ("k1", "b")):
            raise damaged(self.store.loc, "meta/impacts", f"holds {str(impacts)[:60]!r}, not k1 and b")
        held: dict[str, float] = impacts
        return held

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        stored = self.impacts()
        tokens = list(query.tokens)
        if stored == {"k1": float(self.k1), "b": float(self.b)}:
            rows = self.sql(lambda conn: pgsearch.bm25(conn, self.store.loc, tokens, self.depth))
            return self.ranked(query, rows), ["BM25 from the postings' stored impacts: the blocks it needs read "
                                              "from PostgreSQL and summed here (pruned, exact)"]
        rows = self.sql(lambda conn: pgsearch.bm25_formula(conn, self.store.loc, tokens, self.k1, self.b,
                                                           self.depth))
        why = (f"its impacts hold for k1 {stored['k1']:g}, b {stored['b']:g}" if stored
               else "its impact blocks are not written yet (an index of an older format, or written before "
                    "impacts were stored)")
        return self.ranked(query, rows), [
            f"BM25 in SQL by the formula over every posting (slower): {why}; ingest with k1 {self.k1:g}, "
            f"b {self.b:g} to store impacts for them"]


class PgFulltext(_PgRetriever):
    name = "pg-fulltext"
    term = ""  # ts_rank_cd: no glossary term
    words = "all"

    def params(self) -> dict[str, Any]:
        return {"tsquery": "websearch_to_tsquery" if self.words == "all" else "plainto_tsquery, ORed",
                "rank": "ts_rank_cd", "text_search": TEXT_SEARCH, **super().params()}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        tsq, rows = self.sql(lambda conn: pgsearch.fulltext(conn, self.store.loc, query.question, self.depth,
                                                            self.words))
        notes = [f"tsquery: {tsq or '(empty: no searchable word)'}"]
        if tsq and not rows:
            notes.append("no chunk holds every word of the question" if self.words == "all"
                         else "no chunk holds any word of the question")
        return self.ranked(query, rows), notes


class PgFulltextOr(PgFulltext):
    name = "pg-fulltext-or"
    words = "or"


class _PgDense(_PgRetriever):
    family = "dense"
    term = "dense"
    exact = True

    @staticmethod
    def runs_on(index: Index) -> bool:
        """An index in PostgreSQL with an embedder's vectors whose embedder this install can run
        (the question is embedded here: retrieve/neural.py `refusal`); the one of [postgres]
        dense when it names another is checked when the retriever is made."""
        return in_postgres(index) and bool(index.embeddings) and refusal(index, next(iter(index.embeddings))) is None

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        super().__init__(index, config, bm25)
        wanted = config.postgres.dense or next(iter(index.embeddings), "")
        if wanted not in index.embeddings:
            raise ConfigError(f"retriever {self.name} needs an embedder's vectors; this index has "
                              f"{', '.join(index.embeddings) or 'none'}",
                              "ingest with --embedder minilm, or set [postgres] dense to one the index has")
        refused = refusal(index, wanted)
        if refused is not None:
            raise ConfigError(f"retriever {self.name} embeds the question with {wanted}: {refused.problem}",
                              refused.hint)
        self.embedder_name = wanted
        sql = f"SELECT table_name, vector_type FROM {self.store.loc.table('embedders')} WHERE name = %s"
        row = self.store.retried(lambda conn: conn.execute(sql, (wanted,)).fetchone())
        if row is None or not IDENTIFIER.match(row[0]) or row[1] not in ("vector", "halfvec"):
            raise damaged(self.store.loc, f"embedders {wanted[:40]}", f"table and vector type {row!r}")
        self.table, self.vector_type = row
        self.ef_search = config.postgres.ef_search
        self._embedder: Any = None

    def params(self) -> dict[str, Any]:
        search = {"search": "exact"} if self.exact else {"search": "hnsw", "ef_search": self.ef_search}
        return {"embedder": self.embedder_name, "vector_type": self.vector_type, **search, **super().params()}

    def vector(self, query: Query) -> np.ndarray:
        """The question's vector, shared with the neural retriever of the same embedder."""
        if self._embedder is None:
            from glassrag.dense.neural import SentenceEmbedder

            self._embedder = SentenceEmbedder.from_params(self.index.embeddings[self.embedder_name].params)
        embedder = self._embedder
        return query.dense_vector(self.embedder_name, lambda: embedder.embed_query(query.question))


class PgDense(_PgDense):
    name = "pg-dense"

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        super().__init__(index, config, bm25)
        self.cutoff = config.neural.cutoff

    def params(self) -> dict[str, Any]:
        return {**super().params(), "cutoff": self.cutoff}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        vector = self.vector(query)
        rows = self.sql(lambda conn: pgsearch.dense(conn, self.store.loc, self.table, self.vector_type, vector,
                                                    self.depth, self.exact, self.ef_search))
        notes = []
        if self.cutoff is not None:
            kept = [r for r in rows if r[1] >= self.cutoff]
            if len(kept) < len(rows):
                notes.append(f"similarity cutoff {self.cutoff} removed {len(rows) - len(kept)} hits")
            rows = kept
        return self.ranked(query, rows), notes


class PgHNSW(PgDense):
    name = "pg-hnsw"
    exact = False


class PgHybrid(_PgDense):
    name = "pg-hybrid"
    term = "RRF"
    exact = False

    def __init__(self, index: Index, config: Config, bm25: BM25 | None = None) -> None:
        super().__init__(index, config, bm25)
        self.cutoff, self.k = config.postgres.hybrid_cutoff, config.fuse.k

    def params(self) -> dict[str, Any]:
        return {**super().params(), "family": "hybrid", "tsquery": "websearch_to_tsquery",
                "rank": "ts_rank_cd", "cutoff": self.cutoff, "fuse": "rrf", "k": self.k}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        vector = self.vector(query)
        rows, sides = self.sql(lambda conn: pgsearch.hybrid(conn, self.store.loc, self.table, self.vector_type,
                                                            query.question, vector, self.depth, self.cutoff,
                                                            self.k, self.ef_search))
        notes = [f"one SQL statement: full text gave {sides['full text']} of these, pgvector "
                 f"(cosine ≥ {self.cutoff}) gave {sides['pgvector']}"]
        return self.ranked(query, rows), notes


# the retrievers an index in PostgreSQL has besides every index's (retrieve/__init__.py `table`),
# each an entry of the same shape as theirs
ENTRIES: dict[str, Entry] = {r.name: Entry(r, describe_score, r.runs_on, term=r.term)
                             for r in (PgBM25, PgDense, PgHNSW, PgFulltext, PgFulltextOr, PgHybrid)}
