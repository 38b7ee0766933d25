"""The cross-encoder with a real (tiny, randomly initialised) BERT model built in a
temporary folder: the real loading and scoring code runs; no weights are downloaded."""

import numpy as np
import pytest

from glassrag.errors import ConfigError
from glassrag.pipeline import Pipeline
from glassrag.rerank.cross_encoder import CrossEncoderReranker, resolve_model_path

transformers = pytest.importorskip("transformers")
pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    import torch

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + (
        "what does e 4107 mean the tilt sensor lost calibration battery is below ten percent "
        "mirror motor overheating daily allowance for meals").split()
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    tokenizer = transformers.BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(0)
    config = transformers.BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32,
                                     max_position_embeddings=128, num_labels=1)
    transformers.BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def test_cross_encoder_scores_the_pool_and_keeps_the_rest(index, tiny_model):
    config = index.config.with_overrides(rerank={"method": "cross-encoder", "model": str(tiny_model),
                                                 "pool": 3})
    answer = Pipeline(index, config).run("What does E-4107 mean?")
    rerank = answer.stage("rerank")
    fused = answer.stage("fuse")
    assert {h.chunk_id for h in rerank.hits[:3]} == {h.chunk_id for h in fused.hits[:3]}
    assert [h.chunk_id for h in rerank.hits[3:]] == [h.chunk_id for h in fused.hits[3:]]
    assert all("cross_encoder" in h.detail for h in rerank.hits[:3])
    assert rerank.params["model"] == str(tiny_model)


def test_blend_keeps_part_of_the_first_stage_order(index, tiny_model):
    texts = {c.id: c.text for c in index.chunks}
    pure = CrossEncoderReranker(str(tiny_model), texts, pool=4, blend=0.0)
    kept = CrossEncoderReranker(str(tiny_model), texts, pool=4, blend=1.0)
    pipe = Pipeline(index)
    query, _ = pipe.analyze("tilt sensor calibration")
    hits = list(pipe.run("tilt sensor calibration").stage("fuse").hits)
    ce_scores = [h.detail["cross_encoder"] for h in pure.apply(query, hits)[0][:4]]
    assert ce_scores == sorted(ce_scores, reverse=True)
    fully_kept, _ = kept.apply(query, hits)
    assert [h.chunk_id for h in fully_kept[:4]] == [h.chunk_id for h in hits[:4]]
    assert fully_kept[0].score == pytest.approx(1.0)  # min-max of the first stage


def test_missing_model_says_how_to_point_at_one(tmp_path):
    with pytest.raises(ConfigError, match="neither a folder nor an installed package") as info:
        resolve_model_path(str(tmp_path / "no-such-model"))
    assert "never downloads" in info.value.hint
    with pytest.raises(ConfigError, match="no cross-encoder model is set"):
        resolve_model_path("")


def test_a_folder_that_is_not_a_model_is_a_clear_error(index, tmp_path):
    (tmp_path / "empty").mkdir()
    reranker = CrossEncoderReranker(str(tmp_path / "empty"), {c.id: c.text for c in index.chunks})
    with pytest.raises(ConfigError, match="cannot load a cross-encoder"):
        reranker.load()
