"""Every entry of every table of stages meets the one stage contract (tests/stage_contract.py)
on a folder index: the handbook of tests/conftest.py with a superseded policy, so the versions
stage has something to do. The same checks run on an index in PostgreSQL in
tests/store/test_stage_contract_pg.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.indexer import build_index
from glassrag.pipeline import TABLES
from tests.conftest import HANDBOOK, write_corpus
from tests.stage_contract import check_entry, every_entry, ids

VERSIONED = {
    "returns-2023.md": "---\ntitle: Returns (2023)\nsuperseded_by: returns-2025\n---\n# Returns\n\n"
                       "A sensor returned within 14 days is refunded in full.\n",
    "returns-2025.md": "---\ntitle: Returns (2025)\n---\n# Returns\n\n"
                       "A sensor returned within 30 days is refunded in full.\n",
}
QUESTION = "calibration of the tilt sensor"


@pytest.fixture(scope="module")
def folder_index(tmp_path_factory: pytest.TempPathFactory):
    docs = write_corpus(tmp_path_factory.mktemp("contract") / "docs", {**HANDBOOK, **VERSIONED})
    config = Config().with_overrides(lsa={"dim": 4}, retrieve={"retrievers": ["bm25", "lsa"]})
    index, report = build_index([docs], config)
    assert not report.failed and index.superseded()
    return index


@pytest.mark.parametrize(("kind", "name", "entry"), every_entry(), ids=ids())
def test_every_entry_meets_the_contract(folder_index, kind, name, entry):
    check_entry(folder_index, kind, name, entry, QUESTION)


def test_every_family_is_a_table():
    """The families the pipeline runs, each a table of entries (a new family is added here)."""
    assert list(TABLES) == ["retrieve", "fuse", "versions", "filter", "window", "rerank", "mmr", "cap", "gate",
                            "budget", "select", "read", "generate"]
    assert all(TABLES[kind] for kind in TABLES)
