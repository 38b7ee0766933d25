"""The indexes and calibrations a sweep evaluates its configurations on.

- **One index per set of index-time settings.** A configuration that changes a setting
  needing a re-ingest (chunker, size, analyzer, LSA, embedder) is evaluated on an index
  built from the same source documents with those settings, kept by a fingerprint of them
  under INDEX/sweeps/indexes/FINGERPRINT/ (written like any index: a temporary folder
  renamed into place) and reused by later sweeps. Like `glassrag demo`, a built index gets
  the learned reranker trained and the gate and reader calibrated on the train split when
  the swept index has them.
- **The gate calibrated for each configuration's settings.** A calibration is valid only for
  the settings it was made with (gate/threshold.py); a configuration whose settings differ
  (k1, the reranker, the gate's rule or cost) has its gate and reader calibrated on the train
  split, as `glassrag calibrate` would, so every configuration is measured with a working
  gate. The pass reuses the stage cache: only the gate's own work is new.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Mapping, Sequence

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.grid import reingest_settings
from glassrag.evaluate.relevance import Judge, Judgement
from glassrag.lexical.analyze import Analyzer
from glassrag.pipeline import Pipeline
from glassrag.schema import Chunk, Document
from glassrag.stage_cache import StageCache, digest
from glassrag.store.base import Index


def fingerprint(config: Config) -> str:
    """A short digest of the settings an index is built with."""
    return digest("index", reingest_settings(config))[:12]


def source_roots(index: Index) -> list[Path]:
    """The folders the index's documents were read from, recovered from each document's
    source path and its path-derived id (`manuals/tx200` read from ROOT/manuals/tx200.md),
    so a re-ingest gives the documents the same ids."""
    roots: list[Path] = []
    for doc in index.documents.values():
        if doc.format == "beir":
            raise ConfigError("this index was built from a BEIR corpus: the sweep cannot find its files",
                              "give the corpus folder with --docs")
        source = Path(doc.source)
        depth = len(PurePosixPath(doc.id).parts)
        root = source.parents[depth - 1] if depth <= len(source.parents) else source.parent
        if not root.is_dir():
            raise ConfigError(f"document {doc.id} was read from {source}, which is gone",
                              "give the source documents with --docs PATH")
        if root not in roots:
            roots.append(root)
    return roots


class RememberingIndex(Index):
    """An index whose chunks, documents and analyses, once read, are kept: a sweep reads the
    same few thousand chunks for every configuration, and a stored index parses each from
    JSON when asked. What it remembers lives in its chunk table, so a copy made with other
    calibrations (dataclasses.replace) shares it."""

    def __post_init__(self) -> None:
        super().__post_init__()
        chunks = self.chunks
        assert isinstance(chunks, RememberedChunks)
        if chunks.analyzer is None:
            chunks.analyzer = RememberingAnalyzer(self.config.analyze)
        self.analyzer = chunks.analyzer
        if self.lsa is not None:
            self.lsa.analyzer = self.analyzer
        self._by_id = chunks.by_id
        self._words = chunks.words_by_id
        self.feature_facts = chunks.feature_facts  # the learned reranker's per-chunk facts

    def chunk(self, chunk_id: str) -> Chunk:
        found = self._by_id.get(chunk_id)
        if found is None:
            found = self._by_id[chunk_id] = super().chunk(chunk_id)
        return found

    def chunk_words(self, chunk_id: str) -> int:
        words = self._words.get(chunk_id)
        if words is None:
            words = self._words[chunk_id] = super().chunk_words(chunk_id)
        return words


class RememberedChunks(Sequence[Chunk]):
    """A chunk table whose chunks, once read, are kept, by row and by id."""

    def __init__(self, table: Sequence[Chunk]) -> None:
        self.table = table
        self._kept: dict[int, Chunk] = {}
        self._positions: Any = None
        self.by_id: dict[str, Chunk] = {}
        self.words_by_id: dict[str, int] = {}
        self.feature_facts: dict[int, Any] = {}
        self.analyzer: RememberingAnalyzer | None = None

    def __len__(self) -> int:
        return len(self.table)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i not in self._kept:
            self._kept[i] = self.table[i]
        return self._kept[i]

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.table)

    @property
    def positions(self) -> Mapping[str, int] | None:
        """chunk id -> row, each looked up once (a stored table searches a sorted array)."""
        table = getattr(self.table, "positions", None)
        if table is None:
            return None
        if not isinstance(self._positions, RememberedLookup):
            self._positions = RememberedLookup(table)
        return self._positions

    def __getattr__(self, name: str) -> Any:  # id_of, words of a stored table
        return getattr(self.table, name)


class RememberedLookup(Mapping[str, int]):
    def __init__(self, table: Mapping[str, int]) -> None:
        self.table = table
        self._kept: dict[str, int] = {}

    def __getitem__(self, key: str) -> int:
        if key not in self._kept:
            self._kept[key] = self.table[key]
        return self._kept[key]

    def __contains__(self, key: object) -> bool:
        return key in self._kept or key in self.table

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)


class RememberingAnalyzer(Analyzer):
    """The index's analyzer, each text analysed once: excerpts and the reader analyse the
    sentences of the same chunks for every configuration."""

    def __init__(self, settings: Any) -> None:
        super().__init__(settings.stopwords, settings.stem, settings.identifiers)
        self._analysed: dict[str, list[str]] = {}
        self._words: dict[str, list[str]] = {}

    def __call__(self, text: str) -> list[str]:
        if text not in self._analysed:
            self._analysed[text] = super().__call__(text)
        return list(self._analysed[text])

    def words(self, text: str) -> list[str]:
        if text not in self._words:
            self._words[text] = super().words(text)
        return list(self._words[text])


class RememberedDocuments(Mapping[str, Document]):
    """A document table whose documents, once read, are kept (the reranker's features read
    a candidate's document, and a stored table parses it from JSON when asked)."""

    def __init__(self, table: Mapping[str, Document]) -> None:
        self.table = table
        self._kept: dict[str, Document] = {}

    def __getitem__(self, doc_id: str) -> Document:
        if doc_id not in self._kept:
            self._kept[doc_id] = self.table[doc_id]
        return self._kept[doc_id]

    def __contains__(self, key: object) -> bool:
        return key in self._kept or key in self.table

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


class RememberingJudge(Judge):
    """A Judge that resolves each question once: the sweep asks again for every configuration."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        super().__init__(chunks)
        self._judged: dict[str, Judgement] = {}

    def judge(self, q: Question) -> Judgement:
        if q.id not in self._judged:
            made = super().judge(q)
            self._judged[q.id] = RememberedJudgement(**{f.name: getattr(made, f.name) for f in fields(made)})
        return self._judged[q.id]


class RememberedJudgement(Judgement):
    """A judgement that maps each ranking to its units once (LSA's list, observed, is the
    same in every configuration of a BM25 grid)."""

    def ranked_units(self, chunk_ids: Sequence[str]) -> list[str]:
        kept = self.__dict__.setdefault("_ranked", {})
        key = tuple(chunk_ids)
        if key not in kept:
            kept[key] = super().ranked_units(chunk_ids)
        return list(kept[key])


@dataclass
class Variant:
    """One index of the sweep, with its stage cache, its judge and its calibrations."""

    fingerprint: str
    index: Index
    path: str
    built: bool  # made by this sweep (False: the swept index, or one kept by an earlier sweep)
    seconds: float
    cache: StageCache | None
    judge: Judge
    calibrations: dict[str, Index] = field(default_factory=dict)

    def describe(self, base: Config) -> dict[str, Any]:
        mine = reingest_settings(self.index.config)
        theirs = reingest_settings(base)
        return {"fingerprint": self.fingerprint, "path": self.path, "built": self.built,
                "seconds": round(self.seconds, 3), "chunks": len(self.index.chunks),
                "settings": {n: v for n, v in mine.items() if theirs.get(n) != v}}


def variant_for(index: Index, path: str, caching: bool, built: bool = False, seconds: float = 0.0) -> Variant:
    """The sweep's view of an index: chunks kept once read, judgements kept, a stage cache."""
    fp = fingerprint(index.config)
    if caching:
        index = RememberingIndex(**{**{f.name: getattr(index, f.name) for f in fields(Index)},
                                    "chunks": RememberedChunks(index.chunks),
                                    "documents": RememberedDocuments(index.documents)})
    return Variant(fp, index, path, built, seconds, StageCache(fp) if caching else None,
                   RememberingJudge(index.chunks) if caching else Judge(index.chunks))


def build_variant(base: Index, config: Config, docs: Sequence[Path], folder: Path,
                  questions: Sequence[Question], golden: str, caching: bool) -> Variant:
    """The index of `config`'s index-time settings: read from `folder` when an earlier sweep
    built it, else built from `docs`, trained and calibrated like `glassrag demo`, and saved."""
    from glassrag.evaluate.tune import calibrate_index, train_reranker
    from glassrag.indexer import build_index
    from glassrag.store import EmbeddedStore

    store = EmbeddedStore(folder)
    t0 = time.perf_counter()
    if store.exists():
        found = store.read()
        if fingerprint(found.config) == fingerprint(config):
            return variant_for(found, str(folder), caching, False, time.perf_counter() - t0)
    index, report = build_index(list(docs), config)
    if not index.chunks:
        raise ConfigError(f"no chunk was made from {', '.join(map(str, docs))} with {fingerprint(config)}",
                          "check --docs")
    if base.extra.get("reranker"):
        index.extra["reranker"] = train_reranker(index, config, questions, golden)
    if base.extra.get("gate"):
        index.extra["gate"], index.extra["reader"] = calibrate_index(index, config, questions,
                                                                     config.gate.rule, golden)
    store.write(index)
    return variant_for(store.read(), str(folder), caching, True, time.perf_counter() - t0)


def calibrated(variant: Variant, config: Config, questions: Sequence[Question], golden: str) -> tuple[Index, str]:
    """The variant's index with a gate (and reader) calibrated for `config`, and how: "index"
    (its own calibration fits these settings), "train" (calibrated here on the train split),
    or "none" (the index has no calibration, so the gate declines only what matches nothing)."""
    from glassrag.evaluate.tune import calibrate_index

    index = variant.index
    gate = index.extra.get("gate")
    if not gate:
        return index, "none"
    settings = Pipeline(index, config).scoring_settings()
    same_rule = gate.get("rule") == config.gate.rule and (config.gate.rule != "cost"
                                                          or gate.get("cost") == config.gate.cost)
    if gate.get("settings") == settings and same_rule:
        return index, "index"
    key = digest(settings, config.gate.rule, config.gate.cost, config.answer.budget_words)
    if key not in variant.calibrations:
        made, reader = calibrate_index(index, config, questions, config.gate.rule, golden,
                                       cache=variant.cache, judge=variant.judge)
        variant.calibrations[key] = replace(index, extra={**index.extra, "gate": made, "reader": reader})
    return variant.calibrations[key], "train"
