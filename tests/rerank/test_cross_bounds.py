"""The range of a cross-encoder's logit read from its graph (rerank/cross_bounds.py): the
bundled model's recorded range is its graph's, no pair leaves it, and on a small graph of the
same shape the state that points along the head reaches it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.demo import demo_docs
from glassrag.rerank.cross_onnx import OnnxCrossEncoder, bundled_folder

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from glassrag.rerank.cross_bounds import bounds  # noqa: E402

D, T = 16, 4


def test_the_bundled_models_recorded_bounds_are_its_graphs():
    folder = bundled_folder()
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    low, high = bounds(folder / "model.int8.onnx")
    assert meta["logit_bounds"] == {"model.int8.onnx": [low, high]}
    assert OnnxCrossEncoder(folder, "int8").bounds == (low, high)
    assert -10 < low < 0 < high < 10  # a range the gate can use: wider than the logits seen, not unbounded


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_no_pair_real_or_hostile_leaves_the_bundled_models_bounds():
    ce = OnnxCrossEncoder(bundled_folder(), "int8")
    low, high = ce.bounds
    passages = [p.read_text(encoding="utf-8")[:1500] for p in sorted(Path(demo_docs()).rglob("*.md"))][:8]
    questions = ["What does error E-4107 mean on the TX-200?", "How do I reset the device?", "",
                 " ".join(f"E-{4100 + j} TX-{2000 + j}" for j in range(400)), "🙂" * 300, "?!" * 500,
                 "Who painted the Mona Lisa?"]
    pairs = [(q, p) for q in questions for p in passages] + [(q, "") for q in questions]
    alone = ce.predict(pairs, batch_size=1)
    batched = ce.predict(pairs, batch_size=16)  # another activation scale per batch: still inside
    for logits in (alone, batched):
        assert low <= logits.min() and logits.max() <= high


def pooled_head_graph(gamma: np.ndarray, beta: np.ndarray, w: np.ndarray, b: float,
                      scaled: np.ndarray | None = None, head: str = "Gemm", divisor: str = "clipped") -> onnx.ModelProto:
    """x (1, T, D) → LayerNorm(γ, β) → masked mean over tokens → w · pooled + b: the shape of a
    model train-cross-encoder exports; `scaled`, a learned scale between norm and pooling; `head`
    Gemm or MatMul then Add; `divisor` "clipped" (the mask's count) or "fixed" (a constant)."""
    inits = [numpy_helper.from_array(gamma.astype(np.float32), "gamma"),
             numpy_helper.from_array(beta.astype(np.float32), "beta"),
             numpy_helper.from_array(w.reshape(1, D).astype(np.float32), "head.weight"),
             numpy_helper.from_array(np.array([b], dtype=np.float32), "head.bias"),
             numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
             numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
             numpy_helper.from_array(w.reshape(D, 1).astype(np.float32), "head.weight_t"),
             numpy_helper.from_array(np.array([0.5], dtype=np.float32), "half")]
    nodes = [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["normed"], axis=-1, epsilon=1e-12)]
    states = "normed"
    if scaled is not None:
        inits.append(numpy_helper.from_array(scaled.astype(np.float32), "scale"))
        nodes.append(helper.make_node("Mul", ["normed", "scale"], ["rescaled"]))
        states = "rescaled"
    nodes += [helper.make_node("Mul", [states, "mask"], ["masked"]),
              helper.make_node("ReduceSum", ["masked", "axis1"], ["summed"], keepdims=0),
              helper.make_node("ReduceSum", ["mask", "axis1"], ["count"], keepdims=0),
              helper.make_node("Clip", ["count", "one"], ["clipped"]),
              helper.make_node("Div", ["summed", "clipped" if divisor == "clipped" else "half"], ["pooled"])]
    if head == "Gemm":
        nodes.append(helper.make_node("Gemm", ["pooled", "head.weight", "head.bias"], ["logits"], transB=1))
    else:
        nodes += [helper.make_node("MatMul", ["pooled", "head.weight_t"], ["product"]),
                  helper.make_node("Add", ["product", "head.bias"], ["logits"])]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, T, D]),
                                              helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, T, 1])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def run(path: Path, x: np.ndarray, mask: np.ndarray | None = None) -> float:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    m = np.ones((1, T, 1), dtype=np.float32) if mask is None else mask
    return float(session.run(None, {"x": x.astype(np.float32), "mask": m})[0][0, 0])


def test_the_state_along_the_head_reaches_the_bound_and_no_state_passes_it(tmp_path: Path):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    rng = np.random.default_rng(0)
    gamma, beta, w = rng.normal(1, 0.3, D), rng.normal(0, 0.2, D), rng.normal(0, 0.5, D)
    fp32, int8 = tmp_path / "model.onnx", tmp_path / "model.int8.onnx"
    onnx.save(pooled_head_graph(gamma, beta, w, 0.3), str(fp32))
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    low, high = bounds(fp32)
    c = w * gamma
    along = np.tile(c - c.mean(), (1, T, 1))  # every token normalised to point along w ∘ γ: the maximum
    assert run(fp32, along) == pytest.approx(high, abs=1e-3)
    assert run(fp32, -along) == pytest.approx(low, abs=1e-3)
    assert low < 0.3 + w @ beta < high
    q_low, q_high = bounds(int8)
    assert q_low < low and high < q_high  # the activations' rounding widens the int8 range
    states = [rng.normal(0, rng.uniform(0.01, 100), (1, T, D)) for _ in range(300)] + [along, -along, along * 1e4]
    masks = [None, np.array([1, 0, 0, 0], dtype=np.float32).reshape(1, T, 1)]
    for x in states:
        for m in masks:
            assert low <= run(fp32, x, m) <= high
            assert q_low <= run(int8, x, m) <= q_high


def test_a_head_written_as_matmul_then_add_has_the_gemm_s_bounds(tmp_path: Path):
    rng = np.random.default_rng(2)
    gamma, beta, w = rng.normal(1, 0.3, D), rng.normal(0, 0.2, D), rng.normal(0, 0.5, D)
    for head in ("Gemm", "MatMul"):
        onnx.save(pooled_head_graph(gamma, beta, w, -0.2, head=head), str(tmp_path / f"{head}.onnx"))
    assert bounds(tmp_path / "MatMul.onnx") == bounds(tmp_path / "Gemm.onnx") is not None
    c = w * gamma
    assert run(tmp_path / "MatMul.onnx", np.tile(c - c.mean(), (1, T, 1))) == pytest.approx(
        bounds(tmp_path / "MatMul.onnx")[1], abs=1e-3)


def test_a_graph_of_another_shape_has_no_bounds(tmp_path: Path):
    rng = np.random.default_rng(1)
    gamma, beta, w = rng.normal(1, 0.3, D), rng.normal(0, 0.2, D), rng.normal(0, 0.5, D)
    scaled = tmp_path / "scaled.onnx"  # a learned scale after the norm: γ and β alone say nothing
    onnx.save(pooled_head_graph(gamma, beta, w, 0.0, scaled=rng.normal(0, 3, D)), str(scaled))
    assert bounds(scaled) is None
    fixed = tmp_path / "fixed.onnx"  # a sum divided by a constant below one is no mean: it can grow
    onnx.save(pooled_head_graph(gamma, beta, w, 0.0, divisor="fixed"), str(fixed))
    assert bounds(fixed) is None
    bare = helper.make_graph(  # a linear head on the input itself: nothing bounds it
        [helper.make_node("Gemm", ["x", "head.weight", "head.bias"], ["logits"], transB=1)], "bare",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1])],
        [numpy_helper.from_array(w.reshape(1, D).astype(np.float32), "head.weight"),
         numpy_helper.from_array(np.array([0.0], dtype=np.float32), "head.bias")])
    onnx.save(helper.make_model(bare, opset_imports=[helper.make_opsetid("", 17)]), str(tmp_path / "bare.onnx"))
    assert bounds(tmp_path / "bare.onnx") is None


def test_a_record_without_bounds_or_with_nonsense_gives_none(tmp_path: Path):
    folder = bundled_folder()
    for recorded in (None, {"model.int8.onnx": [3.0, -3.0]}, {"model.int8.onnx": ["a", 1]}, {"model.onnx": [-1, 1]}):
        ce = OnnxCrossEncoder(folder, "int8")
        ce.meta = {k: v for k, v in ce.meta.items() if k != "logit_bounds"}
        if recorded is not None:
            ce.meta["logit_bounds"] = recorded
        assert ce.bounds is None


@pytest.mark.slow
def test_a_folder_made_before_bounds_were_recorded_gets_them(tmp_path: Path):
    import subprocess
    import sys

    from glassrag.gate import answerability

    folder = tmp_path / "older"
    folder.mkdir()
    for name in ("model.int8.onnx", "tokenizer.json"):
        (folder / name).write_bytes((bundled_folder() / name).read_bytes())
    meta = json.loads((bundled_folder() / "meta.json").read_text(encoding="utf-8"))
    recorded = meta.pop("logit_bounds")
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    digest = answerability.model_digest(folder)
    assert OnnxCrossEncoder(folder, "int8").bounds is None
    done = subprocess.run([sys.executable, "-m", "glassrag.rerank.cross_bounds", str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads((folder / "meta.json").read_text(encoding="utf-8")) == {**meta, "logit_bounds": recorded}
    assert OnnxCrossEncoder(folder, "int8").bounds == tuple(recorded["model.int8.onnx"])
    assert answerability.model_digest(folder) == digest  # its calibrations stay valid
    again = tmp_path / "again"  # the process keeps one model per folder, read before the record changed
    again.symlink_to(folder)
    assert answerability.Answerability(again, 5).bounds == tuple(recorded["model.int8.onnx"])
    wrong = subprocess.run([sys.executable, "-m", "glassrag.rerank.cross_bounds", str(tmp_path)],
                           capture_output=True, text=True)
    assert wrong.returncode == 1 and "not a cross-encoder folder" in wrong.stderr


def test_the_gate_trusts_a_recorded_range_only_for_the_file_it_was_read_from(tmp_path: Path):
    from glassrag.gate import answerability

    assert answerability.Answerability(bundled_folder(), 5).bounds == OnnxCrossEncoder(bundled_folder()).bounds
    folder = tmp_path / "swapped"  # the record of one model, the file of another (here: its bytes changed)
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((bundled_folder() / "tokenizer.json").read_bytes())
    (folder / "model.int8.onnx").write_bytes((bundled_folder() / "model.int8.onnx").read_bytes() + b"\0")
    (folder / "meta.json").write_bytes((bundled_folder() / "meta.json").read_bytes())
    assert OnnxCrossEncoder(folder, "int8").bounds is not None  # recorded ...
    assert answerability.Answerability(folder, 5).bounds is None  # ... but not for this file: the gate reads
