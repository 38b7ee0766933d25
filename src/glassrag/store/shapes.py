"""What each array and JSON file of a stored generation must be, checked when the index is
opened, so that a crafted or damaged file is "index files damaged" there and never a crash in
the middle of a question (issue 51.13).

An array is checked by its header only: its kind (`INTEGER`, `NUMBER`, `BYTES`; a string,
object or structured dtype never passes) and its shape, whose lengths must agree with the
tables it indexes (n chunks, n + 1 offsets, one BM25 weight per posting). No page of the
array is read, so opening an index stays as cheap as its memory map (docs/index-format.md).
Values (an offset past its file, a posting's row past the last chunk) are checked where a
cheap check exists (`check_size`), not here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

INTEGER = "iu"
NUMBER = "iuf"
FLOAT = "f"
BYTES = "S"
STORED = "biufS"  # any array a generation may hold (a retriever's own part)
KIND_NAMES = {INTEGER: "integers", NUMBER: "numbers", FLOAT: "floats", BYTES: "byte strings",
              STORED: "numbers or byte strings"}


def load_array(path: Path) -> np.ndarray:
    """A memory-mapped array (pages are read when touched), as a plain ndarray over the map: a
    slice of an `np.memmap` is a memmap too, made through its Python `__array_finalize__`,
    which was 15 % of the web server's samples under bench/load.py (issue 30)."""
    return np.load(path, mmap_mode="r", allow_pickle=False).view(np.ndarray)


def array(path: Path, kinds: str, shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """`load_array(path)` when its dtype's kind is one of `kinds` and its shape is `shape`
    (None: any length on that axis; `shape` None: any shape); else ValueError naming the file,
    what it holds and what it should."""
    data = load_array(path)
    wrong = data.dtype.kind not in kinds or (shape is not None and (
        data.ndim != len(shape) or any(want is not None and got != want for got, want in zip(data.shape, shape))))
    if wrong:
        want = "×".join("n" if n is None else str(n) for n in shape) if shape is not None else "any shape"
        raise ValueError(f"{path.name} holds {data.dtype} {'×'.join(map(str, data.shape)) or 'scalar'}, "
                         f"where {want} {KIND_NAMES.get(kinds, kinds)} belong")
    return data


def read_json(path: Path) -> Any:
    """A JSON file's value; ValueError (not RecursionError) for one nested too deep to parse."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"{path.name} is nested too deep to be a glassrag file") from None


def strings(path: Path) -> list[str]:
    """A JSON list of strings (vocab.json), or ValueError."""
    data = read_json(path)
    if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
        raise ValueError(f"{path.name} is not a list of terms")
    return data


def table(path: Path) -> dict[str, Any]:
    """A JSON object (manifest.json, params.json), or ValueError."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path.name} is not a JSON object")
    return data
