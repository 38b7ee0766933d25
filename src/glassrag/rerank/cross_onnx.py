"""A cross-encoder run by ONNX Runtime with the `tokenizers` library: no torch, no
transformers. The folder holds `model.onnx` and/or `model.int8.onnx` (inputs input_ids,
attention_mask, token_type_ids; output one logit a pair), `tokenizer.json` and, for a model
trained here, `meta.json` (how it was trained, on what, and what it measured).

The bundled model (`bundled`) is the one `glassrag train-cross-encoder` fitted on SQuAD 1.1
train articles (training/squad/PROVENANCE.md), shipped as int8 in
`glassrag/data/models/cross-encoder/`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from glassrag import threads
from glassrag.errors import ConfigError
from glassrag.models import bundled_cross_encoder

bundled_folder = bundled_cross_encoder  # the bundled model's folder, named as its readers here call it
BUNDLED = "bundled"
MAX_LENGTH = 256


def is_onnx_folder(folder: Path) -> bool:
    return (folder / "tokenizer.json").is_file() and any(
        (folder / f).is_file() for f in ("model.onnx", "model.int8.onnx"))


def precision_of(folder: Path) -> str:
    """int8 when the folder holds the quantised model, else fp32."""
    return "int8" if (folder / "model.int8.onnx").is_file() else "fp32"


def sha256(path: Path) -> str:
    """The SHA-256 of a file, read a megabyte at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class OnnxCrossEncoder:
    """`predict(pairs)`: one logit per (question, passage) pair, the passage truncated so the
    pair fits `max_length` tokens. `precision` "int8" reads model.int8.onnx, "fp32" model.onnx."""

    def __init__(self, folder: Path, precision: str = "int8", max_length: int = MAX_LENGTH,
                 threads: int | None = None) -> None:
        if precision not in ("int8", "fp32"):
            raise ConfigError(f"unknown cross-encoder precision {precision!r}", "choose int8 or fp32")
        self.folder = folder
        self.precision = precision
        self.max_length = max_length
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        meta = folder / "meta.json"
        self.meta: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8")) if meta.is_file() else {}

    @property
    def file(self) -> Path:
        return self.folder / ("model.int8.onnx" if self.precision == "int8" else "model.onnx")

    @property
    def bounds(self) -> tuple[float, float] | None:
        """(lowest, highest) logit this file can give, as meta.json's `logit_bounds` records it
        (written by train-cross-encoder, rerank/cross_bounds.py); None when it does not."""
        got = (self.meta.get("logit_bounds") or {}).get(self.file.name)
        if isinstance(got, list) and len(got) == 2 and all(isinstance(v, (int, float)) for v in got) and got[0] <= got[1]:
            return float(got[0]), float(got[1])
        return None

    def load(self) -> tuple[Any, Any]:
        if self._session is None:
            from glassrag.models import onnx_session, onnx_tokenizer

            self._session = onnx_session(self.file, self.threads or threads.model_threads(),
                                         "the folder needs model.onnx (fp32) or model.int8.onnx (int8) and "
                                         "tokenizer.json; choose the precision it has, or re-create the "
                                         "folder with glassrag train-cross-encoder")
            self._tokenizer = onnx_tokenizer(self.folder / "tokenizer.json", self.max_length)
            self._inputs = {i.name for i in self._session.get_inputs()}
        return self._session, self._tokenizer

    def predict(self, pairs: Sequence[tuple[str, str]], batch_size: int = 16) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        session, tok = self.load()
        out = []
        for start in range(0, len(pairs), batch_size):
            enc = tok.encode_batch([(q, p) for q, p in pairs[start:start + batch_size]])
            feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                    "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
            logits = session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
            out.append(np.asarray(logits, dtype=np.float64).reshape(len(enc), -1)[:, 0])
        return np.concatenate(out)


_LOADED: dict[tuple[str, str], OnnxCrossEncoder] = {}


def shared(folder: Path, precision: str = "int8") -> OnnxCrossEncoder:
    """One loaded model per folder and precision in a process (pages, evaluations and the
    gate share it)."""
    key = (str(folder), precision)
    if key not in _LOADED:
        _LOADED[key] = OnnxCrossEncoder(folder, precision)
    return _LOADED[key]
