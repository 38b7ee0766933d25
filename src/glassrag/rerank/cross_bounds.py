"""The range a cross-encoder's logit can take, whatever the pair: read from its ONNX graph.

A model made by `glassrag train-cross-encoder` ends as `logit = w · mean_t(y_t) + b`, where
each token state y_t is the output of the encoder's last LayerNorm,

    y = γ ∘ z + β,   z = (x − mean x) / sqrt(var x + ε):   Σ z_i = 0,  ‖z‖² ≤ d

so w · y = c · z + w · β with c = w ∘ γ, and c · z = (c − c̄) · z (z sums to zero) lies
within ± sqrt(d) ‖c − c̄‖ (Cauchy–Schwarz). A mean of token states is a convex combination of
them: the same bound holds for the pooled vector. The int8 model quantises the pooled vector
on the fly (DynamicQuantizeLinear: each component moved by at most one step s, with s at most
the components' whole possible range / 255, each component within β_i ± |γ_i| sqrt(d − 1)),
which widens the range by Σ |w_i| · s. So

    b + w · β − R  ≤  logit  ≤  b + w · β + R,   R = sqrt(d) ‖c − c̄‖ (+ Σ |w_i| s for int8)

For the bundled model: −7.23 to 7.23 (its meta.json), while the logits seen on the demo's
questions run from −5.2 to 5.4. The gate uses it to decide without reading a passage when
no logit in the range could change its decision (gate/stage.py).

`bounds(file)` returns None when the graph does not end this way (a model made elsewhere):
then nothing is assumed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

# ops a pooled vector may pass through between the last LayerNorm and the head
POOLING = {"Div", "ReduceSum", "Mul", "DynamicQuantizeLinear", "Identity", "Dropout", "Cast"}
# float32 rounding in the LayerNorm and the head, relative
SLACK = 1e-4


def bounds(file: Path) -> tuple[float, float] | None:
    """(lowest, highest) logit the ONNX model in `file` can give, or None if its graph is not
    last LayerNorm → mean pooling → linear head. Needs the `onnx` package (training has it)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(file)).graph
    init = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in graph.initializer}
    made = {o: n for n in graph.node for o in n.output}
    head = _head(graph.output[0].name, made, init)
    if head is None:
        return None
    w, b, pooled, quantised = head
    norm = _last_norm(pooled, made, init)
    if norm is None or norm[0].size != w.size:
        return None
    gamma, beta = norm
    d = w.size
    c = w * gamma
    reach = math.sqrt(d) * float(np.linalg.norm(c - c.mean()))
    if quantised:
        spread = np.abs(gamma) * math.sqrt(d - 1)
        top, bottom = max(0.0, float((beta + spread).max())), min(0.0, float((beta - spread).min()))
        reach += float(np.abs(w).sum()) * (top - bottom) / 255.0
    centre = b + float(w @ beta)
    reach += SLACK * (abs(centre) + reach)
    # a pair of no token at all pools to zeros: the logit is b; rounded outwards, for meta.json
    return (math.floor(min(centre - reach, b) * 1e4) / 1e4, math.ceil(max(centre + reach, b) * 1e4) / 1e4)


def recorded(folder: Path) -> dict[str, list[float]]:
    """meta.json's `logit_bounds`: each ONNX file of `folder` whose graph has them."""
    out = {}
    for name in ("model.onnx", "model.int8.onnx"):
        if (folder / name).is_file():
            found = bounds(folder / name)
            if found is not None:
                out[name] = list(found)
    return out


def _head(output: str, made: dict[str, Any], init: dict[str, Any]) -> tuple[np.ndarray, float, str, bool] | None:
    """(w, b, the pooled vector's name, whether it is quantised) of the graph's last linear map."""
    node = made.get(output)
    if node is None:
        return None
    if node.op_type == "Gemm" and len(node.input) == 3 and node.input[1] in init and node.input[2] in init:
        w = init[node.input[1]]
        trans_b = any(a.name == "transB" and a.i == 1 for a in node.attribute)
        w = (w if trans_b else w.T).reshape(-1) if w.ndim == 2 and min(w.shape) == 1 else None
        return None if w is None else (w, float(init[node.input[2]].reshape(-1)[0]), node.input[0], False)
    if node.op_type != "Add":
        return None
    bias = [i for i in node.input if i in init]
    other = [i for i in node.input if i not in init]
    if len(bias) != 1 or len(other) != 1 or init[bias[0]].size != 1:
        return None
    b = float(init[bias[0]].reshape(-1)[0])
    node = made.get(other[0])
    if node is not None and node.op_type == "MatMul" and node.input[1] in init:
        return init[node.input[1]].reshape(-1), b, node.input[0], False
    # int8: Mul(Cast(MatMulInteger(DynamicQuantizeLinear(x), Wq, zx, zw)), sx · sw)
    if node is None or node.op_type != "Mul":
        return None
    cast = made.get(node.input[0])
    scales = made.get(node.input[1])
    integer = made.get(cast.input[0]) if cast is not None and cast.op_type == "Cast" else None
    if integer is None or integer.op_type != "MatMulInteger" or scales is None or scales.op_type != "Mul":
        return None
    wq, zw = integer.input[1], integer.input[3] if len(integer.input) > 3 else ""
    scale = [i for i in scales.input if i in init]
    quantiser = made.get(integer.input[0])
    if wq not in init or len(scale) != 1 or quantiser is None or quantiser.op_type != "DynamicQuantizeLinear":
        return None
    w = (init[wq] - (init[zw] if zw in init else 0.0)).reshape(-1) * init[scale[0]].reshape(-1)
    return w, b, quantiser.input[0], True


def _last_norm(name: str, made: dict[str, Any], init: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
    """(γ, β) of the LayerNorm whose output is pooled into `name`, through pooling ops only."""
    node = made.get(name)
    while node is not None and node.op_type in POOLING:
        if node.op_type in ("Mul", "Div") and any(i in init for i in node.input[1:]):
            return None  # a learned scale between the norm and the head: no bound from γ and β alone
        node = made.get(node.input[0])
    if node is None or node.op_type != "LayerNormalization" or len(node.input) < 3:
        return None
    if node.input[1] not in init or node.input[2] not in init:
        return None
    return init[node.input[1]].reshape(-1), init[node.input[2]].reshape(-1)


def record(folder: Path) -> dict[str, list[float]]:
    """Write `logit_bounds` into the meta.json of a model folder made before train-cross-encoder
    recorded them (the gate then decides unread where the range allows, gate/stage.py), with the
    SHA-256 of each file they were read from; returns them. The model's digest, and so every
    calibration made with it, is unchanged: it is the model file's."""
    import json

    from glassrag.rerank.cross_onnx import sha256

    meta_file = folder / "meta.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.is_file() else {}
    meta["logit_bounds"] = recorded(folder)
    # the range holds for these files: the gate trusts it while their hashes match (gate/answerability.py)
    meta["files"] = {**meta.get("files", {}), **{name: sha256(folder / name) for name in meta["logit_bounds"]}}
    partial = meta_file.with_name("meta.json.partial")
    partial.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    partial.replace(meta_file)
    bounds: dict[str, list[float]] = meta["logit_bounds"]
    return bounds


if __name__ == "__main__":  # python -m glassrag.rerank.cross_bounds FOLDER
    import sys

    for name in sys.argv[1:] or [""]:
        if not name or not (Path(name) / "tokenizer.json").is_file():
            raise SystemExit(f"{name or '(none)'}: not a cross-encoder folder; usage: python -m "
                             "glassrag.rerank.cross_bounds FOLDER (holding model.onnx or model.int8.onnx)")
        print(name, record(Path(name)))
