"""The bundled handbook and its golden set keep the promises the README makes about them."""

import re
from collections import Counter

import pytest

from glassrag.config import Config
from glassrag.demo import demo_docs, demo_golden
from glassrag.evaluate.golden import KINDS, check_against, load_golden, normalize_space
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline


@pytest.fixture(scope="module")
def demo_index():
    index, report = build_index([demo_docs()], Config())
    assert not report.failed and not report.skipped
    return index


@pytest.fixture(scope="module")
def golden():
    return load_golden(demo_golden())


def test_size_of_the_corpus(demo_index):
    words = sum(len(d.text.split()) for d in demo_index.documents.values())
    assert 25_000 <= words <= 40_000
    assert 12 <= len(demo_index.documents) <= 20


def test_golden_set_shape(golden):
    assert len(golden) >= 120
    splits = Counter(q.split for q in golden)
    assert splits["train"] >= 70 and splits["test"] >= 50
    kinds = Counter(q.kind for q in golden)
    assert set(kinds) == set(KINDS)
    assert all(n >= 10 for n in kinds.values()), kinds
    assert kinds["unanswerable"] >= 20


def test_every_label_is_verbatim_and_located(golden, demo_index):
    assert check_against(golden, demo_index.documents) == []
    for q in golden:
        for word in q.must_contain:
            assert any(word.lower() in a.text.lower() for a in q.answers), (q.id, word)


def test_outdated_answers_are_not_in_the_superseded_policy(golden, demo_index):
    old = normalize_space(demo_index.documents["returns-policy-2023"].text)
    outdated = [q for q in golden if q.kind == "outdated"]
    for q in outdated:
        for a in q.answers:
            assert a.doc == "returns-policy-2025"
            assert normalize_space(a.text) not in old, q.id
    meta_new = demo_index.documents["returns-policy-2025"].metadata
    meta_old = demo_index.documents["returns-policy-2023"].metadata
    assert meta_new["supersedes"] == "returns-policy-2023"
    assert meta_old["superseded_by"] == "returns-policy-2025"


def test_identifier_traps_exist(demo_index):
    text = {d: doc.text for d, doc in demo_index.documents.items()}
    assert "E-4107" in text["manual-tx200"] and "E-4107" not in text["manual-tx2000"]
    assert "E-4170" in text["manual-tx2000"] and "E-4170" not in text["manual-tx200"]
    assert re.search(r"TX-200\b", text["manual-tx200"]) and "TX-2000" in text["manual-tx2000"]


def test_multi_doc_questions_list_every_document(golden):
    for q in golden:
        if q.kind == "multi-doc":
            assert len(q.answer_docs) >= 2, q.id


@pytest.mark.parametrize("qid", ["q012", "q013", "q022", "q066", "q121"])
def test_questions_of_five_kinds_get_answering_passages(qid, golden, demo_index):
    """identifier (E-4107 on the TX-200), identifier (E-4170 on the TX-2000), named-term,
    table and multi-doc: an answering span is among the passages shown."""
    q = next(q for q in golden if q.id == qid)
    answer = Pipeline(demo_index).run(q.question)
    shown = [answer.passage, *answer.also_found]
    texts = [normalize_space(p.text) for p in shown]
    assert any(normalize_space(a.text) in t for a in q.answers for t in texts), q.question
