"""The ask page asks each retriever's table entry what its score is and whether it runs on
this index (issue 29): bm25-rm3's score is a BM25 sum, not a cosine, and a folder index
offers no pg-* retriever (they answered 400), while an index in PostgreSQL offers them."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web app needs the web extra: pip install 'glassrag[web]'")
pytest.importorskip("httpx", reason="Starlette's TestClient needs httpx")

from starlette.testclient import TestClient  # noqa: E402

from glassrag.retrieve import RETRIEVERS, offered, table  # noqa: E402
from glassrag.retrieve.postgres import ENTRIES as PG_RETRIEVERS  # noqa: E402  (the pg-* retrievers)
from glassrag.store import EmbeddedStore  # noqa: E402
from glassrag.web.server import create_app  # noqa: E402
from tests.web.conftest import BASE_URL  # noqa: E402

QUESTION = "What does E-4107 mean?"
PLAIN = {"rerank.method": "none", "gate.enabled": "false"}


@pytest.fixture
def client(index, tmp_path: Path) -> TestClient:
    """The web app over the handbook of tests/conftest.py, saved as a folder index."""
    folder = tmp_path / "handbook"
    EmbeddedStore(folder).write(index)
    return TestClient(create_app([folder]), base_url=BASE_URL)


def test_bm25_rm3_score_is_described_as_bm25_not_cosine(client: TestClient):
    r = client.get("/ask.json?" + urlencode({"q": QUESTION, "role.bm25": "off", "role.lsa": "off",
                                              "role.bm25-rm3": "fused", **PLAIN}))
    assert r.status_code == 200, r.text
    score = r.json()["score"]
    assert score["stage"] == "bm25-rm3" and score["term"] == "BM25"
    assert "BM25" in score["text"] and "RM3" in score["text"] and "cosine" not in score["text"].lower()
    page = client.get("/ask?" + urlencode({"q": QUESTION, "role.bm25": "off", "role.lsa": "off",
                                           "role.bm25-rm3": "fused", **PLAIN})).text
    assert "pseudo-relevance feedback (RM3)" in page


def test_every_retriever_entry_describes_its_score():
    entries = table(postgres=True, embedders=["minilm"])  # every retriever an index can have
    assert set(RETRIEVERS) | set(PG_RETRIEVERS) | {"minilm", "ray-minilm"} == set(entries)
    for name, entry in entries.items():
        term, text = entry.describe_score(name, {})
        assert text, name
    assert "cosine" in entries["lsa"].describe_score("lsa", {})[1].lower()
    assert "cosine" not in entries["bm25"].describe_score("bm25", {})[1].lower()
    assert "cosine" in entries["minilm"].describe_score("minilm", {})[1].lower()  # named after its model
    assert "shards" in entries["ray-minilm"].describe_score("ray-minilm", {})[1]  # its vectors, on the shards


def test_a_folder_index_offers_no_pg_retriever(client: TestClient, index):
    assert not set(offered(index)) & set(PG_RETRIEVERS)
    r = client.get("/ask.json?" + urlencode({"q": QUESTION, **PLAIN}))
    assert r.status_code == 200, r.text
    roles = [f["name"] for g in r.json()["settings"]["form"] for f in g.get("fields", ())
             if f["name"].startswith("role.")]
    assert roles and "role.bm25" in roles and "role.lsa" in roles
    assert not [n for n in roles if n.startswith("role.pg-")]


def test_an_index_in_postgresql_offers_the_pg_retrievers():
    """An index object as the PostgreSQL store reads one: its chunk table holds the store (`pg`)."""
    from glassrag.config import Config

    from glassrag.retrieve.neural import refusal
    from glassrag.store.base import Embedded
    from tests.test_stage_contract import MINILM

    vectors = Embedded("minilm", dict(MINILM), np.zeros((1, 384), dtype=np.float32))
    stored = SimpleNamespace(chunks=SimpleNamespace(pg=object()), lsa=None, embeddings={"minilm": vectors},
                             config=Config(), parts={})
    got = offered(stored)
    assert set(PG_RETRIEVERS) - {"pg-dense", "pg-hnsw", "pg-hybrid"} <= set(got)
    assert "lsa" not in got  # no LSA model: LSA not offered
    runs = refusal(stored, "minilm") is None  # an install that can embed a question with MiniLM
    assert {"pg-dense", "pg-hnsw", "pg-hybrid", "minilm"} <= set(got) if runs else not {"pg-dense", "minilm"} & set(got)
    assert got[-1] == "minilm" or not runs  # the embedders' after the rest


def test_the_matter_filter_and_window_scoring_are_drawn_and_described(client: TestClient):
    """The two stages the experiment log switches on run from the settings form's names, are drawn
    on the route, and the window's score is described as the window's sum, not as BM25 alone."""
    asked = {"q": QUESTION, "filter.matter": "true", "window.size": "1", "window.weight": "0.5", **PLAIN}
    r = client.get("/ask.json?" + urlencode(asked))
    assert r.status_code == 200, r.text
    stages = [t["name"] for t in r.json()["answer"]["trace"]]
    assert stages.index("bm25") < stages.index("matter") < stages.index("window") < stages.index("gate")
    assert r.json()["score"]["stage"] == "window"
    assert "best score above the list's lowest" in r.json()["score"]["text"]
    page = client.get("/ask?" + urlencode(asked))
    assert page.status_code == 200 and "matter" in page.text and "window" in page.text


@pytest.mark.parametrize("name, term", [("bm25", "BM25"), ("bm25-rm3", "BM25"), ("bm25-hyde", "BM25"),
                                        ("bm25-rewrite", "BM25"), ("lsa", "LSA"), ("minilm", "dense"),
                                        ("pg-bm25", "BM25"), ("pg-dense", "dense"), ("pg-hybrid", "RRF")])
def test_the_ask_page_and_the_front_page_read_one_term_per_retriever(name: str, term: str):
    """Issue 50.6: each kept its own map of names, and they disagreed: the front page called
    bm25-rm3 and bm25-hyde "dense", the ask page gave them no term. Both read the entry now."""
    from glassrag.config import Config
    from glassrag.schema import StageTrace
    from glassrag.web.ask import stage_term
    from glassrag.web.home import stages

    offered_here = table(postgres=True, embedders=["minilm"])  # an index in PostgreSQL with MiniLM's vectors
    assert stage_term(StageTrace(name, "retrieve", {}, (), (), 0, 0.0, ()), offered_here) == term
    config = Config().with_overrides(retrieve={"retrievers": [name], "observe": []})
    assert next(s for s in stages(config, {}, offered_here) if s["stage"] == "retrieve")["term"] == term


@pytest.mark.parametrize("name, kind, params, term", [
    ("fuse", "fuse", {"method": "rrf"}, "RRF"), ("fuse", "fuse", {"method": "weighted"}, "fusion"),
    ("rerank", "rerank", {"method": "learned"}, "learned reranker"), ("mmr", "mmr", {}, "MMR"),
    ("cap", "cap", {}, "cap"), ("gate", "gate", {}, "gate"), ("budget", "budget", {}, "budget"),
    ("read", "read", {}, "reader"), ("generate", "generate", {}, "generator"), ("window", "window", {}, ""),
    ("bm25", "observe", {}, "observed retriever"), ("analyze", "analyze", {}, "")])
def test_every_stage_s_term_is_its_entry_s(name: str, kind: str, params: dict, term: str):
    from glassrag.schema import StageTrace
    from glassrag.web.ask import stage_term
    from glassrag.web.glossary import TERMS

    assert stage_term(StageTrace(name, kind, params, (), (), 0, 0.0, ()), RETRIEVERS) == term
    assert term == "" or term in TERMS  # a term the glossary explains
