"""Bulk rows for PostgreSQL's COPY ... (FORMAT BINARY), built by numpy without a Python loop.

A binary COPY stream is a header, then per row an int16 field count and per field an int32
byte length and the value in network byte order, then the trailer -1 (PostgreSQL docs,
"COPY: Binary Format"). Every column here has a fixed width (int4, int8, float4, and
pgvector's vector / halfvec: int16 dim, int16 unused, then dim float4 / float2), so a row is
a numpy structured record and a block of a million rows is one `tobytes()`.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

HEADER = b"PGCOPY\n\xff\r\n\0" + np.array([0, 0], dtype=">i4").tobytes()
TRAILER = np.array([-1], dtype=">i2").tobytes()
SCALARS = {"int4": ">i4", "int8": ">i8", "float4": ">f4", "float8": ">f8"}
BLOCK = 1 << 18  # rows per bytes block


def _field(kind: str, dim: int) -> tuple[str, np.dtype]:
    if kind in SCALARS:
        return kind, np.dtype(SCALARS[kind])
    element = {"vector": ">f4", "halfvec": ">f2"}[kind]
    return kind, np.dtype([("dim", ">i2"), ("unused", ">i2"), ("values", element, (dim,))])


def binary_copy(columns: list[tuple[str, np.ndarray]]) -> Iterator[bytes]:
    """The bytes of a binary COPY of these columns (kind, values), in blocks: kinds int4,
    int8, float4, float8 (1-d values) and vector, halfvec (2-d values, one row each)."""
    n = len(columns[0][1]) if columns else 0
    fields: list[tuple[str, Any]] = [("count", ">i2")]
    for j, (kind, values) in enumerate(columns):
        dim = values.shape[1] if values.ndim == 2 else 0
        _, dtype = _field(kind, dim)
        fields += [(f"len{j}", ">i4"), (f"v{j}", dtype)]
    record = np.dtype(fields)
    yield HEADER
    for lo in range(0, n, BLOCK):
        hi = min(n, lo + BLOCK)
        rows = np.empty(hi - lo, dtype=record)
        rows["count"] = len(columns)
        for j, (kind, values) in enumerate(columns):
            size = record[f"v{j}"].itemsize
            rows[f"len{j}"] = size
            if kind in SCALARS:
                rows[f"v{j}"] = values[lo:hi]
            else:
                rows[f"v{j}"]["dim"] = values.shape[1]
                rows[f"v{j}"]["unused"] = 0
                rows[f"v{j}"]["values"] = values[lo:hi]
        yield rows.tobytes()
    yield TRAILER


def copy_arrays(conn: Any, table: str, names: list[str], columns: list[tuple[str, np.ndarray]]) -> None:
    """COPY numpy columns into `table` (its columns `names`, in the same order)."""
    with conn.cursor() as cur, cur.copy(f"COPY {table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)") as cp:
        for block in binary_copy(columns):
            cp.write(block)
