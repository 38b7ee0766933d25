import json

import pytest

from glassrag.schema import Answer, Chunk, Document, Hit, Passage, Section, StageTrace, content_hash


def roundtrip(obj):
    return type(obj).from_dict(json.loads(json.dumps(obj.to_dict())))


def test_every_record_survives_json():
    doc = Document("d", "Title", "d.md", "markdown", "Head\nbody", (Section("§ Head", 0, 9, ("Head",)),),
                   {"date": "2025-01-01"}, "abc")
    chunk = Chunk.make("d", "§ Head", "Head\nbody", 0, 9, 0, ("Head",))
    hit = Hit(chunk.id, 1.5, 1, "fuse", {"inputs": {"bm25": {"rank": 1, "score": 2.0}}})
    trace = StageTrace("fuse", "fuse", {"k": 60}, ("bm25", "lsa"), (hit,), 3, 0.25, ("note",))
    passage = Passage(chunk.id, "d", "Title", "§ Head", "Head\nbody", 1.5, 1)
    answer = Answer("q?", passage, (), False, "", (trace,))
    for obj in (doc, chunk, hit, trace, passage, answer):
        assert roundtrip(obj) == obj


def test_chunk_ids_are_content_hashes():
    a = Chunk.make("d", "§ A", "same text", 0, 9, 0)
    b = Chunk.make("d", "§ A", "same text", 0, 9, 0)
    c = Chunk.make("d", "§ A", "other text", 0, 10, 0)
    assert a.id == b.id != c.id
    assert a.id == content_hash("d", "0", "9", "same text")


def test_citation_names_title_and_locator():
    p = Passage("c", "d", "TX-200 Manual", "§ 2.1 Sensor errors", "t", 1.0, 1)
    assert p.citation == "TX-200 Manual, § 2.1 Sensor errors"


def test_the_schema_package_hands_on_every_name_it_lists():
    """glassrag.schema imports a module when one of its names is first asked for: every name it
    lists resolves, to the module's own object, and nothing else does."""
    import importlib

    import glassrag.schema as schema

    assert sorted(schema.__all__) == sorted(schema._WHERE)
    for name in schema.__all__:
        module = importlib.import_module(f"glassrag.schema.{schema._WHERE[name]}")
        assert getattr(schema, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        schema.Nothing


# the kinds of stage (schema/kind.py, issue 50.1) -----------------------------------------------

def test_the_kinds_that_rank_and_score():
    """What the bare tuples RANKING_KINDS and SCORING_KINDS held, now each kind's own declaration."""
    from glassrag.schema import Kind

    assert [k.value for k in Kind if k.ranks] == ["retrieve", "fuse", "versions", "filter", "window", "rerank",
                                                  "mmr", "cap"]
    assert [k.value for k in Kind if k.scores] == ["retrieve", "fuse", "window", "rerank"]
    assert not Kind.OBSERVE.ranks and not Kind.GATE.ranks and not Kind.ANALYZE.scores


def test_a_trace_keeps_its_kind_as_text_and_reads_it_back():
    import json

    from glassrag.schema import Kind, StageTrace

    trace = StageTrace("rerank", Kind.RERANK, {}, ("fuse",), (), 3, 1.0)
    text = json.dumps(trace.to_dict())
    assert '"kind": "rerank"' in text
    back = StageTrace.from_dict(json.loads(text))
    assert Kind(back.kind) is Kind.RERANK and Kind(back.kind).ranks and Kind(back.kind).scores
    assert Kind.of("rerank") is Kind.RERANK and Kind.of("no such kind") is None
