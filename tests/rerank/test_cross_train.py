"""Training the cross-encoder (rerank/cross_train.py) on the real packaged encoder: pairs
grouped by question, the listwise term, an export whose ONNX logits equal the torch model's,
and a folder that appears only when complete."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

from glassrag.errors import ConfigError
from glassrag.rerank import cross_train

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

ALPS = ("The Alps stretch across eight countries. They are about 1,200 km long. Mont Blanc, at 4,806 m, "
        "is the highest peak.")
ALPS_NO_ANSWER = "The Alps stretch across eight countries. They are about 1,200 km long."
RHINE = "The Rhine rises in the Swiss Alps and flows into the North Sea at Rotterdam."
PIANO = "Chopin wrote most of his works for solo piano."


def rows() -> list[dict]:
    q1, q2 = "How high is Mont Blanc?", "Where does the Rhine end?"
    return [{"question": q1, "passage": ALPS, "label": 1, "kind": "own"},
            {"question": q1, "passage": ALPS_NO_ANSWER, "label": 0, "kind": "answer-removed"},
            {"question": q2, "passage": RHINE, "label": 1, "kind": "own"},
            {"question": q1, "passage": PIANO, "label": 0, "kind": "other-article"},
            {"question": q2, "passage": ALPS, "label": 0, "kind": "same-article"},
            {"question": q2, "passage": PIANO, "label": 0, "kind": "other-article"}]


def write(path: Path, lines: list) -> Path:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in lines:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    return path


def test_read_pairs_counts_its_limit_in_questions_and_keeps_each_question_whole(tmp_path: Path):
    path = write(tmp_path / "p.jsonl.gz", rows())
    first = cross_train.read_pairs(path, limit=1)
    assert [r["passage"] for r in first] == [ALPS, ALPS_NO_ANSWER]  # the file's next row is another question
    assert len(cross_train.read_pairs(path)) == 6
    assert cross_train.groups(cross_train.read_pairs(path)) == [[0, 1, 3], [2, 4, 5]]


def test_several_files_merge_by_question_once_each_with_edited_questions_beside_their_original(tmp_path: Path):
    main = write(tmp_path / "pairs.jsonl.gz", rows())
    q1, q2 = "How high is Mont Blanc?", "Where does the Rhine end?"
    edited = "How high is Mont Rhine?"
    hard = write(tmp_path / "hard.jsonl.gz", [
        {"question": q2, "passage": RHINE, "label": 1, "kind": "own"},  # also in pairs: kept once
        {"question": q2, "passage": ALPS_NO_ANSWER, "label": 0, "kind": "entity-overlap"},
        {"question": edited, "passage": ALPS, "label": 0, "kind": "edited-question", "original": q1}])
    merged = cross_train.read_many([main, hard])
    assert len(merged) == 8
    assert [(r["question"], r["kind"]) for r in merged] == [
        (q1, "own"), (q1, "answer-removed"), (q1, "other-article"), (edited, "edited-question"),
        (q2, "own"), (q2, "same-article"), (q2, "other-article"), (q2, "entity-overlap")]
    # the edited question is in its original's group, where the listwise term compares them
    assert cross_train.groups(merged) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # the limit counts merged questions
    assert len(cross_train.read_many([main, hard], limit=1)) == 4
    # one file reads as read_pairs does, a question's rows together
    once = cross_train.read_pairs(main)
    assert cross_train.read_many([main]) == [once[i] for g in cross_train.groups(once) for i in g]


def test_a_wrong_line_names_the_file_and_line(tmp_path: Path):
    path = write(tmp_path / "p.jsonl.gz", [rows()[0], '{"question": "q", "passage": "p"}'])
    with pytest.raises(ConfigError, match="line 2: not a training pair"):
        cross_train.read_pairs(path)
    path = write(tmp_path / "q.jsonl.gz", [{**rows()[0], "label": 0.5}])
    with pytest.raises(ConfigError, match="line 1: label 0.5 is neither 1 nor 0"):
        cross_train.read_pairs(path)


def test_listwise_is_the_softmax_cross_entropy_of_each_question_s_answer():
    logits = torch.tensor([2.0, 0.0, 1.0, 3.0, 0.5])
    labels = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0])
    group = torch.tensor([0, 0, 0, 1, 1])
    first = -(2.0 - math.log(math.exp(2.0) + math.exp(0.0) + math.exp(1.0)))
    second = -(0.5 - math.log(math.exp(3.0) + math.exp(0.5)))
    assert float(cross_train.listwise(logits, labels, group)) == pytest.approx((first + second) / 2, rel=1e-6)
    # a group without a positive adds nothing; none at all gives 0
    assert float(cross_train.listwise(logits[1:4], labels[1:4], group[1:4])) == 0.0


def test_the_schedule_warms_up_then_decays_to_zero():
    factors = [cross_train.schedule(s, 20) for s in range(20)]
    assert factors[:2] == [0.5, 1.0] and factors[-1] == pytest.approx(1 / 18)
    assert all(a >= b for a, b in zip(factors[1:], factors[2:]))


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_trained_and_exported_the_onnx_logits_are_the_torch_model_s(tmp_path: Path):
    pairs = write(tmp_path / "pairs.jsonl.gz", rows())
    out = tmp_path / "model"
    record = cross_train.train_and_export(pairs, out, heldout=pairs, seed=0, source="written for this test",
                                          licence="CC0")
    assert sorted(p.name for p in out.iterdir()) == ["meta.json", "model.int8.onnx", "model.onnx", "tokenizer.json"]
    assert not out.with_name("model.partial").exists()
    meta = json.loads((out / "meta.json").read_text())
    assert meta == json.loads(json.dumps(record))
    assert (meta["questions"], meta["pairs"], meta["steps"]) == (2, 6, 1)  # 4 questions a step: one step
    assert (meta["data"]["source"], meta["data"]["licence"]) == ("written for this test", "CC0")
    assert meta["data"]["kinds"] == {"answer-removed": 1, "other-article": 2, "own": 2, "same-article": 1}
    assert meta["heldout"]["fp32"]["own_first"]["questions"] == 2

    from glassrag.rerank.cross_onnx import OnnxCrossEncoder

    model, tokenizer, _ = cross_train.fit(cross_train.read_pairs(pairs), seed=0)
    texts = [(r["question"], r["passage"]) for r in rows()]
    enc = tokenizer([q for q, _ in texts], [p for _, p in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]).squeeze(-1).numpy()
    got = OnnxCrossEncoder(out, "fp32").predict(texts, batch_size=1)
    # the same seed trains the same model; the exported graph scores as torch does
    np.testing.assert_allclose(got, expected, atol=1e-4)
    # padded in one batch, the graph masks the padding as torch does
    np.testing.assert_allclose(OnnxCrossEncoder(out, "fp32").predict(texts, batch_size=6), expected, atol=1e-4)
    # the record holds each file's logit range (rerank/cross_bounds.py), and the logits are inside
    assert sorted(meta["logit_bounds"]) == ["model.int8.onnx", "model.onnx"]
    for precision in ("fp32", "int8"):
        ce = OnnxCrossEncoder(out, precision)
        low, high = ce.bounds
        assert low < float(ce.predict(texts).min()) and float(ce.predict(texts).max()) < high


def test_a_model_of_fewer_layers_keeps_the_base_s_first_layers_and_exports_them(tmp_path: Path):
    pairs = write(tmp_path / "pairs.jsonl.gz", rows())
    out = tmp_path / "small"
    record = cross_train.train_and_export(pairs, out, seed=0, layers=2)
    assert record["layers"] == 2
    import onnx

    graph = onnx.load(str(out / "model.onnx")).graph
    layers = {n.name.split("/")[3] for n in graph.node if n.name.startswith("/encoder/encoder/layer.")}
    assert layers == {"layer.0", "layer.1"}
    model, tokenizer, _ = cross_train.fit(cross_train.read_pairs(pairs), seed=0, layers=2)
    assert len(model.encoder.encoder.layer) == 2
    texts = [(r["question"], r["passage"]) for r in rows()]
    enc = tokenizer([q for q, _ in texts], [p for _, p in texts], padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = model(enc["input_ids"], enc["attention_mask"], enc["token_type_ids"]).squeeze(-1).numpy()
    from glassrag.rerank.cross_onnx import OnnxCrossEncoder

    np.testing.assert_allclose(OnnxCrossEncoder(out, "fp32").predict(texts, batch_size=1), expected, atol=1e-4)
    # all six by default; on every core the process may use, though a glassrag command set
    # torch (through MKL) to one thread for questions
    from glassrag import threads

    torch.set_num_threads(1)
    record = cross_train.fit(cross_train.read_pairs(pairs), seed=0)[2]
    assert record["layers"] == 6 and record["threads"] == threads.cores()


@pytest.mark.parametrize("layers", [0, 7])
def test_more_layers_than_the_base_has_or_none_is_a_clear_error(tmp_path: Path, layers: int):
    with pytest.raises(ConfigError, match=f"--layers {layers}: the base encoder has 6 layers"):
        cross_train.fit(rows(), seed=0, layers=layers)


def test_an_out_folder_that_holds_something_else_is_not_replaced(tmp_path: Path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="holds no model made by train-cross-encoder"):
        cross_train.train_and_export(write(tmp_path / "p.jsonl.gz", rows()), out)
    assert (out / "mine.txt").read_text() == "keep me"


def test_the_command_prints_what_the_record_measured(tmp_path: Path, capsys):
    from glassrag.cli.train import print_record

    figures = {"pairs": 10, "ms_per_pair": 31.7, "same-article": {"auroc": 0.98842, "low": 0.98, "high": 0.99},
               "own_first": {"share": 0.972, "questions": 500}}
    print_record({"pairs": 6, "questions": 2, "steps": 1, "seconds": 90.0, "threads": 2,
                  "heldout": {"int8": figures}}, tmp_path)
    said = capsys.readouterr().out
    assert "trained on 6 pairs of 2 questions in 1 steps, 1.5 min on 2 threads" in said
    assert "held out, int8: same-article AUROC 0.988 [0.980, 0.990]; 31.7 ms a pair" in said
    assert "own paragraph above all its negatives for 0.972 of 500 questions" in said
