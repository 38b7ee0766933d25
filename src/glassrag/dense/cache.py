"""The embedding cache: vectors keyed by SHA-256 of (embedder name, passage text), so
re-ingesting, or rebuilding with other chunk settings, never embeds the same text with
the same model twice.

    DIR/cache/embeddings/<sha of embedder name>/keys.npy     (fixed-width hex strings)
    DIR/cache/embeddings/<sha of embedder name>/vectors.npy  (float32 rows)
    DIR/cache/embeddings/<sha of embedder name>/embedder.json

It lives beside the index's generations, which come and go; a save writes temporary
files and renames them into place.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np


def text_key(embedder_name: str, text: str) -> str:
    return hashlib.sha256(f"{embedder_name}\x1f{text}".encode("utf-8")).hexdigest()[:32]


class EmbeddingCache:
    def __init__(self, root: Path | None, embedder_name: str) -> None:
        self.embedder_name = embedder_name
        digest = hashlib.sha256(embedder_name.encode("utf-8")).hexdigest()[:16]
        self.folder = root / "embeddings" / digest if root is not None else None
        self.vectors: dict[str, np.ndarray] = {}
        if self.folder is not None and (self.folder / "keys.npy").is_file():
            keys = np.load(self.folder / "keys.npy", allow_pickle=False)
            vectors = np.load(self.folder / "vectors.npy", allow_pickle=False)
            if len(keys) == len(vectors):  # else a save was interrupted: start empty
                self.vectors = dict(zip(keys.tolist(), vectors))
        self.hits = 0
        self.misses = 0

    def split(self, keys: list[str]) -> list[int]:
        """Positions of the keys not in the cache (to embed); counts hits and misses."""
        missing = [i for i, k in enumerate(keys) if k not in self.vectors]
        self.misses += len(missing)
        self.hits += len(keys) - len(missing)
        return missing

    def put(self, keys: list[str], vectors: np.ndarray) -> None:
        for k, v in zip(keys, vectors):
            self.vectors[k] = v

    def get(self, keys: list[str]) -> np.ndarray:
        return np.stack([self.vectors[k] for k in keys]) if keys else np.empty((0, 0), np.float32)

    def save(self) -> None:
        if self.folder is None or not self.vectors:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self.vectors), dtype="U32")
        vectors = np.stack(list(self.vectors.values())).astype(np.float32)
        for name, array in (("keys", keys), ("vectors", vectors)):
            tmp = self.folder / f".{name}.tmp.npy"
            np.save(tmp, array)
            os.replace(tmp, self.folder / f"{name}.npy")
        (self.folder / "embedder.json").write_text(json.dumps({"embedder": self.embedder_name}))
