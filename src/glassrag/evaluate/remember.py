"""What a sweep keeps of an index once read, so that its configurations read it once: the
chunks, documents, word counts and the reranker's per-chunk facts (a stored index parses a
chunk from JSON each time it is asked for one), each text's analysis, and each question's
judgement with the units of each ranking it has seen. Nothing here changes a result: the
kept values are those the index gives."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Iterator, Mapping, Sequence, TypeVar

from glassrag.evaluate.golden import Question
from glassrag.evaluate.relevance import Judge, Judgement
from glassrag.lexical.analyze import Analyzer
from glassrag.schema import Chunk
from glassrag.store.base import ChunkTable, Index

V = TypeVar("V")


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
    """A chunk table whose chunks, once read, are kept, by row and by id: a ChunkTable
    (store/base.py) whose other members are its table's."""

    def __init__(self, table: ChunkTable) -> None:
        self.table = table
        self._kept: dict[int, Chunk] = {}
        self._positions: Any = None
        self.by_id: dict[str, Chunk] = {}
        self.words_by_id: dict[str, int] = {}
        self.feature_facts: dict[int, Any] = {}
        self.analyzer: RememberingAnalyzer | None = None
        self.ids, self.words, self.folder, self.pg = table.ids, table.words, table.folder, table.pg

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
        table = self.table.positions
        if table is None:
            return None
        if not isinstance(self._positions, Remembered):
            self._positions = Remembered(table)
        return self._positions

    def id_of(self, row: int) -> str:
        return self.table.id_of(row)


class Remembered(Mapping[str, V]):
    """A table whose values, once read, are kept: chunk positions, and documents (the
    reranker's features read a candidate's document, and a stored table parses it from JSON
    when asked). Other attributes are the table's."""

    def __init__(self, table: Mapping[str, V]) -> None:
        self.table = table
        self._kept: dict[str, V] = {}

    def __getitem__(self, key: str) -> V:
        if key not in self._kept:
            self._kept[key] = self.table[key]
        return self._kept[key]

    def __contains__(self, key: object) -> bool:
        return key in self._kept or key in self.table

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.table, name)


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
