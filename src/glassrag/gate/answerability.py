"""The answerability signals: a cross-encoder reads the question with each of the top
`depth` passages of the ranking the gate sees and gives a logit s_i (log-odds that the
passage answers the question). The gate's candidates are

    answerability         = max_i s_i                  (the best passage's log-odds)
    answerability_margin  = s_(1) − s_(2)              (how far it stands above the next one; 0 with one)

Unlike every lexical or retrieval score, this one reads question and passage together, so
it can tell "the passage is about the question's topic" from "the passage answers it".
What a high score does not mean: that the passage is true, current, or the whole answer;
the bundled model learned from Wikipedia paragraphs (SQuAD 1.1 train articles), and its
scale is calibrated per corpus like every other signal.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from glassrag.errors import ConfigError
from glassrag.rerank.cross_onnx import (BUNDLED, OnnxCrossEncoder, bundled_folder, is_onnx_folder,
                                        precision_of, sha256, shared)

OFF = ("", "none", "off")


def model_folder(name: str) -> Path | None:
    """The folder of the answerability model `name` (None: switched off)."""
    if name in OFF:
        return None
    folder = bundled_folder() if name == BUNDLED else Path(name).expanduser()
    if not is_onnx_folder(folder):
        raise ConfigError(
            f"gate.answerability {name!r}: {folder} holds no ONNX cross-encoder",
            "a folder needs model.onnx or model.int8.onnx and tokenizer.json (glassrag "
            "train-cross-encoder makes one); set gate.answerability = \"none\" to leave it out")
    return folder


def read_by(calibration: dict[str, Any] | None) -> bool:
    """Whether a stored calibration's score reads an answerability signal."""
    score = (calibration or {}).get("score") or {}
    names = [score.get("name", "")] if score.get("kind") == "signal" else score.get("names", [])
    return any(str(n).startswith("answerability") for n in names)


@lru_cache(maxsize=16)
def _digest(path: str, size: int, mtime: float) -> str:
    return sha256(Path(path))[:12]


def model_digest(folder: Path) -> str:
    """A short digest of the model file: another model invalidates a calibration. The bundled
    model's is the SHA-256 its meta.json records (pip checked the installed file against the
    wheel's RECORD; hashing its 23 MB cost 0.05 CPU s of every ask); any other folder's file is
    hashed, once per process and file version."""
    model = shared(folder, precision_of(folder))  # the process's one instance: no re-read of meta.json
    recorded = model.meta.get("files", {}).get(model.file.name)
    if folder.resolve() == bundled_folder().resolve() and isinstance(recorded, str) and len(recorded) == 64:
        return recorded[:12]
    stat = os.stat(model.file)
    return _digest(str(model.file), stat.st_size, stat.st_mtime)


def signals(scores: Sequence[float]) -> dict[str, float]:
    """answerability and answerability_margin of the top passages' logits."""
    if not len(scores):
        return {}
    s = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    return {"answerability": float(s[0]), "answerability_margin": float(s[0] - s[1]) if s.size > 1 else 0.0}


# (model file, question, chunk id) -> logit: a chunk id is its content's hash, so a pair
# scored once is never scored again in this process (a sweep's configurations, an
# evaluation's repeated questions); bounded, oldest first out
_SCORED: dict[tuple[str, str, str], float] = {}
MAX_SCORED = 200_000


class Answerability:
    """Scores (question, passage) pairs with the model of `folder`, loaded on first use and
    shared by every pipeline of the process."""

    def __init__(self, folder: Path, depth: int) -> None:
        self.folder = folder
        self.depth = depth
        self.model: OnnxCrossEncoder = shared(folder, precision_of(folder))

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The lowest and highest logit the model can give (rerank/cross_bounds.py), as its
        meta.json records them, trusted only while the record's SHA-256 of the model file is
        the file's (another file put in the folder has other bounds): None otherwise, and when
        it records none. The gate decides unread on these, so a stale range would be wrong
        decisions; without one it reads."""
        got = self.model.bounds
        recorded = self.model.meta.get("files", {}).get(self.model.file.name)
        if got is None or not isinstance(recorded, str) or recorded[:12] != model_digest(self.folder):
            return None
        return got

    def scores(self, question: str, chunk_ids: Sequence[str], text: Callable[[str], str]) -> list[float]:
        ids = list(chunk_ids)[: self.depth]
        file = str(self.model.file)
        todo = [c for c in ids if (file, question, c) not in _SCORED]
        if todo:
            # one pair a call: no padding, so a pair's logit is the same whatever it was scored with
            pairs = [(question, text(c)) for c in todo]
            for c, s in zip(todo, self.model.predict(pairs, batch_size=1).tolist()):
                _SCORED[(file, question, c)] = s
            while len(_SCORED) > MAX_SCORED:
                del _SCORED[next(iter(_SCORED))]
        return [_SCORED[(file, question, c)] for c in ids]
