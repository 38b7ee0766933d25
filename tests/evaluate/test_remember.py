"""What a sweep keeps of an index once read (evaluate/remember.py): the same values as the
table, each item read once. The tables below are plain containers that count what is read
from them, standing in for a stored index's tables, which parse an item each time it is
asked for (issue 13: mutation testing of evaluate/)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Iterator, Mapping, Sequence

import pytest

from glassrag.config import Config
from glassrag.evaluate.golden import Question, Span
from glassrag.evaluate.relevance import Judge
from glassrag.evaluate.remember import (Remembered, RememberedChunks, RememberedJudgement, RememberingAnalyzer,
                                        RememberingIndex, RememberingJudge)
from glassrag.lexical.analyze import Analyzer
from glassrag.rerank.features import FeatureMaker
from glassrag.store.base import Index


class Rows(Sequence[Any]):
    """A list that records every row read by index, and every pass over it; a ChunkTable
    (store/base.py) that stores nothing beyond its rows unless given."""

    ids = positions = words = folder = pg = None

    def __init__(self, items: Sequence[Any], **attributes: Any) -> None:
        self.items = list(items)
        self.reads: list[int] = []
        self.passes = 0
        self.__dict__.update(attributes)

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: Any) -> Any:
        self.reads.append(i)
        return self.items[i]

    def __iter__(self) -> Iterator[Any]:
        self.passes += 1
        return iter(self.items)

    def id_of(self, row: int) -> str:
        return self[row].id


class Table(Mapping[str, Any]):
    """A dict that records every key read and every membership asked."""

    def __init__(self, items: Mapping[str, Any], **attributes: Any) -> None:
        self.items = dict(items)
        self.reads: list[str] = []
        self.asked: list[object] = []
        self.__dict__.update(attributes)

    def __getitem__(self, key: str) -> Any:
        self.reads.append(key)
        return self.items[key]

    def __contains__(self, key: object) -> bool:
        self.asked.append(key)
        return key in self.items

    def __iter__(self) -> Iterator[str]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


# ------------------------------------------------------------------------ RememberedChunks


def test_remembered_rows_are_the_table_s_rows_each_read_once():
    table = Rows("abcde")
    rows = RememberedChunks(table)
    assert len(rows) == 5
    assert [rows[1], rows[3], rows[1], rows[3]] == ["b", "d", "b", "d"]
    assert table.reads == [1, 3]
    assert list(rows) == list("abcde")


@pytest.mark.parametrize("cut, expected, read", [
    (slice(1, 4), ["b", "c", "d"], [1, 2, 3]),
    (slice(None, None, 2), ["a", "c", "e"], [0, 2, 4]),
    (slice(-2, None), ["d", "e"], [3, 4]),  # positions, not -2 and -1
    (slice(None, None, -2), ["e", "c", "a"], [4, 2, 0]),
    (slice(3, 1), [], []),
])
def test_a_slice_is_read_row_by_row_through_what_is_kept(cut, expected, read):
    table = Rows("abcde")
    rows = RememberedChunks(table)
    assert rows[cut] == expected and table.reads == read
    assert rows[cut] == expected and table.reads == read  # read once


def test_positions_are_the_table_s_each_looked_up_once():
    positions = Table({"x": 0, "y": 1})
    rows = RememberedChunks(Rows("ab", positions=positions))
    kept = rows.positions
    assert isinstance(kept, Remembered) and kept.table is positions
    assert rows.positions is kept  # made once
    assert [kept["y"], kept["y"], rows.positions["x"]] == [1, 1, 0]
    assert positions.reads == ["y", "x"]


def test_a_table_without_positions_has_none():
    assert RememberedChunks(Rows("ab")).positions is None


def test_other_attributes_are_the_table_s():
    rows = RememberedChunks(Rows("ab", words=[7, 9], id_of=str.upper))
    assert rows.words == [7, 9] and rows.id_of("c") == "C"
    with pytest.raises(AttributeError):
        rows.nothing_like_this


# ------------------------------------------------------------------------------- Remembered


def test_remembered_values_are_the_table_s_each_read_once():
    table = Table({"a": 1, "b": 2}, title="docs")
    kept = Remembered(table)
    assert [kept["a"], kept["a"], kept["b"]] == [1, 1, 2]
    assert table.reads == ["a", "b"]
    assert (list(kept), len(kept), dict(kept)) == (["a", "b"], 2, {"a": 1, "b": 2})
    assert kept.title == "docs"
    with pytest.raises(KeyError):
        kept["z"]


def test_membership_is_answered_by_what_is_kept_first():
    table = Table({"a": 1, "b": 2})
    kept = Remembered(table)
    kept["a"]
    assert "a" in kept and table.asked == []  # kept: the table is not asked
    assert "b" in kept and table.asked == ["b"]  # in the table, not read yet
    assert "z" not in kept and table.asked == ["b", "z"]


# ----------------------------------------------------------------------- RememberingAnalyzer


def test_the_analyzer_analyses_like_the_index_s_and_hands_out_copies():
    settings = Config().with_overrides(analyze={"stopwords": "none", "stem": False,
                                                "identifiers": False}).analyze
    analyzer = RememberingAnalyzer(settings)
    plain = Analyzer("none", False, False)
    assert (analyzer.stopwords, analyzer.stem, analyzer.identifiers) == ("none", False, False)
    text = "The sensors of the TX-200 report E-4107"
    first = analyzer(text)
    assert first == plain(text)
    first.append("changed")
    assert analyzer(text) == plain(text)
    words = analyzer.words(text)
    assert words == plain.words(text)
    words.clear()
    assert analyzer.words(text) == plain.words(text) != []
    assert analyzer("battery") == plain("battery") != plain(text)


# ------------------------------------------------------------------------- RememberingIndex


def remembering(index: Index, chunks: Sequence[Any], documents: Mapping[str, Any]) -> RememberingIndex:
    return RememberingIndex(**{**{f.name: getattr(index, f.name) for f in fields(Index)},
                               "chunks": RememberedChunks(chunks), "documents": Remembered(documents)})


def test_the_index_keeps_chunks_and_word_counts_by_id(index):
    words = Rows([100 + i for i in range(len(index.chunks))])  # a stored table's word counts
    table = Rows(index.chunks, words=words)
    kept = remembering(index, table, index.documents)
    cid = index.chunks[3].id
    assert kept.chunk(cid) is table.items[3] and kept.chunk(cid) is table.items[3]
    assert kept.chunks.by_id == {cid: table.items[3]}
    assert table.reads == [3]
    assert [kept.chunk_words(cid), kept.chunk_words(cid)] == [103, 103]
    assert words.reads == [3] and kept.chunks.words_by_id == {cid: 103}


def test_a_copy_shares_what_the_index_remembers(index):
    kept = remembering(index, index.chunks, index.documents)
    assert isinstance(kept.analyzer, RememberingAnalyzer) and kept.chunks.analyzer is kept.analyzer
    assert kept.lsa is not None and kept.lsa.analyzer is kept.analyzer
    assert kept.feature_facts is kept.chunks.feature_facts
    cid = index.chunks[2].id
    kept.chunk(cid)
    copy = replace(kept, extra={"gate": {}})
    assert copy.analyzer is kept.analyzer and copy.lsa.analyzer is kept.analyzer
    assert copy.chunks.by_id == {cid: index.chunks[2]}
    assert copy.feature_facts is kept.feature_facts
    assert copy.analyzer("tilt sensors") == Analyzer(**index.analyzer.params())("tilt sensors")


def test_a_copy_finds_a_chunk_read_before_by_its_id_without_a_pass_over_the_table(index):
    table = Rows(index.chunks)  # a plain list: its position map is made by a pass over it
    kept = remembering(index, table, index.documents)
    cid = index.chunks[5].id
    assert kept.chunk(cid) is table.items[5] and table.passes == 1
    copy = replace(kept, extra={"gate": {}})
    assert copy.chunk(cid) is table.items[5]
    assert (table.passes, table.reads) == (1, [5])


def test_the_reranker_s_per_chunk_facts_are_kept_for_every_pipeline(index):
    kept = remembering(index, index.chunks, index.documents)
    assert kept.feature_facts == {} and kept.feature_facts is kept.chunks.feature_facts
    first = FeatureMaker(kept, None).chunk_facts(3)
    assert kept.chunks.feature_facts == {3: first}
    assert FeatureMaker(replace(kept), None).chunk_facts(3) is first


def test_an_index_without_lsa_gets_the_remembering_analyzer_too(index):
    kept = remembering(replace(index, lsa=None), index.chunks, index.documents)
    assert kept.lsa is None and isinstance(kept.analyzer, RememberingAnalyzer)


def test_documents_are_read_once(index):
    docs = Table(index.documents)
    kept = remembering(index, index.chunks, docs)
    assert kept.documents["manual"] is docs.items["manual"]
    assert kept.documents["manual"] is docs.items["manual"]
    assert docs.reads == ["manual"]


# ------------------------------------------------------------------------- RememberingJudge

SENSOR = Question("sensor", "What does E-4107 mean?", True, answers=(Span("manual", "§ 2.1 Sensor errors"),))


def test_the_judge_judges_each_question_once(index):
    judge = RememberingJudge(index.chunks)
    first = judge.judge(SENSOR)
    plain = Judge(index.chunks).judge(SENSOR)
    assert isinstance(first, RememberedJudgement)
    assert {f.name: getattr(first, f.name) for f in fields(plain)} == \
        {f.name: getattr(plain, f.name) for f in fields(plain)}
    assert first.relevant_chunks() == {index.chunks[3].id}
    # the same id is the same question: its judgement is not made again
    assert judge.judge(replace(SENSOR, answers=(Span("travel"),))) is first
    other = judge.judge(replace(SENSOR, id="travel", answers=(Span("travel"),)))
    assert other.relevant_chunks() == {c.id for c in index.chunks if c.doc_id == "travel"}


def test_ranked_units_are_kept_per_ranking_and_handed_out_as_copies(index):
    judgement = RememberingJudge(index.chunks).judge(SENSOR)
    ids = [c.id for c in index.chunks[2:5]]
    expected = ["~" + ids[0], "a0:manual", "~" + ids[2]]
    first = judgement.ranked_units(ids)
    assert first == expected == Judge(index.chunks).judge(SENSOR).ranked_units(ids)
    first.append("changed")
    assert judgement.ranked_units(tuple(ids)) == expected  # a list and a tuple are the same ranking
    # a ranking seen before is not judged again: its units stay those first found
    judgement.satisfies.clear()
    assert judgement.ranked_units(ids) == expected
    assert judgement.ranked_units(ids[:2]) == ["~" + ids[0], "~" + ids[1]]
