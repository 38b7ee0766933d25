"""Cross-encoder reranking: a sentence-transformers `CrossEncoder` reads question and
passage together and scores each of the top `pool` candidates (the pool size is the
main latency dial: one model call per candidate).

With `blend` = β > 0 the final score keeps part of the first-stage ranking:

    score = (1 − β) · minmax(ce) + β · minmax(first-stage score)

The model loads lazily from a local folder or an installed package's folder, with
`HF_HUB_OFFLINE=1`: glassrag never downloads weights. `bundled` is the model trained here
(rerank/cross_onnx.py); a folder holding an ONNX model runs through ONNX Runtime without
torch, any other through sentence-transformers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from glassrag.errors import ConfigError
from glassrag.fuse.normalize import min_max
from glassrag.models import installed_model_folder, load
from glassrag.query import Query
from glassrag.rerank.cross_onnx import (BUNDLED, OnnxCrossEncoder, bundled_folder, is_onnx_folder,
                                        precision_of, shared)
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import NOT_A_PROBABILITY, ListStage
from glassrag.store.base import ChunkTexts


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    blend = f", blended with {params.get('blend')} of the first-stage score" if params.get("blend") else ""
    return "cross-encoder", (
        f"The cross-encoder's relevance score ({params.get('model') or 'model'}{blend}): a match strength "
        f"of that model, comparable within this question. {NOT_A_PROBABILITY}")


def made(index: Any, config: Any, bm25: Any) -> CrossEncoderReranker:
    r = config.rerank
    return CrossEncoderReranker(r.model, ChunkTexts(index), r.pool, r.blend)


def resolve_model_path(model: str) -> Path:
    """A folder path, or the folder of an installed Python package of that name."""
    if not model:
        raise ConfigError("no cross-encoder model is set",
                          "set [rerank] model to a local folder with a sentence-transformers "
                          "CrossEncoder (config.json, weights, tokenizer)")
    if model == BUNDLED:
        return bundled_folder()
    path = Path(model).expanduser()
    folder = path if path.is_dir() else installed_model_folder(model)
    if folder is not None:
        return folder
    raise ConfigError(
        f"cross-encoder model {model!r} is neither a folder nor an installed package",
        "point [rerank] model at a local folder holding the model (glassrag never downloads "
        "weights): e.g. one saved with CrossEncoder(...).save(PATH) on a machine with network")


class CrossEncoderReranker(ListStage):
    name = "rerank"
    kind = Kind.RERANK

    def __init__(self, model: str, texts: Mapping[str, str], pool: int = 20, blend: float = 0.0,
                 batch_size: int = 32) -> None:
        if not 0.0 <= blend <= 1.0:
            raise ConfigError(f"rerank.blend must be in [0, 1], got {blend}")
        self.model_name = model
        self.path = resolve_model_path(model)
        self.texts = texts
        self.pool = pool
        self.blend = blend
        self.batch_size = batch_size
        self._model: Any = None

    def params(self) -> dict[str, Any]:
        return {"method": "cross-encoder", "model": self.model_name, "pool": self.pool,
                "blend": self.blend}

    def load(self) -> Any:
        if self._model is None and is_onnx_folder(self.path):  # no torch needed
            self._model = shared(self.path, precision_of(self.path))
        if self._model is None:
            self._model = load("CrossEncoder", self.path, "a cross-encoder",
                               "the folder needs config.json, the weights and the tokenizer files "
                               "of a sentence-transformers CrossEncoder")
        return self._model

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        head, tail = hits[: self.pool], hits[self.pool:]
        if not head:
            return hits, []
        pairs = [(query.question, self.texts[h.chunk_id]) for h in head]
        model = self.load()
        if isinstance(model, OnnxCrossEncoder):
            ce = model.predict(pairs, batch_size=self.batch_size)
        else:
            ce = np.asarray(model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False),
                            dtype=np.float64).ravel()
        score = ce if self.blend == 0 else (
            (1 - self.blend) * min_max(ce) + self.blend * min_max(np.array([h.score for h in head])))
        order = np.argsort(-score, kind="stable")
        out = [Hit(head[i].chunk_id, float(score[i]), r, self.name,
                   {**head[i].detail, "input_rank": head[i].rank, "cross_encoder": float(ce[i])})
               for r, i in enumerate(order, 1)]
        out += [Hit(h.chunk_id, 0.0, len(out) + j, self.name, {**h.detail, "input_rank": h.rank})
                for j, h in enumerate(tail, 1)]
        return out, [f"cross-encoder scored the top {len(head)}"]
