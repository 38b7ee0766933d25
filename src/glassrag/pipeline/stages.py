"""The stages after retrieval, chosen from the settings: prefer current versions, the reranker
(looked up by name in RERANKERS; `auto` decides by the trained reranker's cross-validation),
MMR and the per-document cap; the contract every stage meets (`Stage`), and the views of the
index they read (chunk id → document, chunk id → text)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterator, Protocol

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.lexical.bm25 import BM25
from glassrag.query import Query
from glassrag.rerank.cap import DocumentCap
from glassrag.rerank.versions import MODES, PreferCurrent
from glassrag.schema import Hit
from glassrag.store.base import Index

RERANKERS = ("none", "auto", "learned", "cross-encoder")


class Stage(Protocol):
    """A stage: reorders, filters or rescores a ranked list (a retriever ranks every chunk
    from the analysed question and is given an empty list; glassrag/retrieve/)."""

    name: str
    kind: str

    def params(self) -> dict[str, Any]: ...

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]: ...


def after_retrieval(index: Index, config: Config, bm25: BM25,
                    chunk_doc: ChunkDocs) -> tuple[list[Stage], list[str]]:
    """The stages between fusion and the gate that `config` switches on, in the order they run,
    and the notes of what was decided for them (which reranker `auto` chose, and why)."""
    c = config
    stages: list[Stage] = []
    notes: list[str] = []
    if c.versions.mode not in MODES:
        raise ConfigError(f"unknown versions.mode {c.versions.mode!r}", f"choose one of: {', '.join(MODES)}")
    if c.versions.mode != "off" and index.superseded():  # only where versions exist
        stages.append(PreferCurrent(None, chunk_doc, c.versions.mode, index.superseded()))
    if c.rerank.method not in RERANKERS:
        raise ConfigError(f"unknown rerank.method {c.rerank.method!r}",
                          f"choose one of: {', '.join(RERANKERS)}")
    method = c.rerank.method
    if method == "auto":
        method, why = auto_reranker(index.extra.get("reranker"))
        notes.append("rerank auto: " + why)
    if method == "learned":
        model = index.extra.get("reranker")
        if model is None:
            raise ConfigError("the learned reranker has not been trained for this index",
                              "train it first: glassrag rerank-train --index DIR --golden FILE")
        from glassrag.rerank.features import FeatureMaker
        from glassrag.rerank.learned import LearnedReranker

        stages.append(LearnedReranker(model, FeatureMaker(index, bm25), c.rerank.pool,
                                      c.rerank.neighbours))
    elif method == "cross-encoder":
        from glassrag.rerank.cross_encoder import CrossEncoderReranker

        stages.append(CrossEncoderReranker(c.rerank.model, ChunkTexts(index),
                                           c.rerank.pool, c.rerank.blend))
    if c.mmr.relevance is not None:
        from glassrag.rerank.mmr import MMR, tfidf_rows

        stages.append(MMR(tfidf_rows(index.counts.tf), index.position, c.mmr.relevance, c.mmr.pool))
    if c.cap.per_document > 0:
        stages.append(DocumentCap(chunk_doc, c.cap.per_document))
    return stages, notes


def auto_reranker(model: dict[str, Any] | None) -> tuple[str, str]:
    """What `rerank.method = auto` runs and why: the learned reranker only when its
    cross-validation on the train split shows it beats the order it is given
    (rerank/learned_cv.py); a model trained before that was recorded is not used."""
    from glassrag.rerank.learned_cv import summary

    if not model:
        return "none", "no reranker trained for this index (glassrag rerank-train)"
    cv = model.get("cv")
    if cv and cv.get("helps"):
        return "learned", "using the trained learned reranker: " + summary(cv)
    return "none", "not using the trained learned reranker: " + summary(cv)


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
