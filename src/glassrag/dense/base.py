"""The interface every embedding model implements, LSA and neural alike."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Embedder(Protocol):
    """Turns passages and queries into vectors in one space.

    `name` identifies the model (and its instruction), so cached vectors are never mixed
    across models. Vectors come back as float32 rows; search normalises them.
    """

    name: str

    def params(self) -> dict[str, Any]: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
