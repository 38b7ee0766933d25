"""What a PostgreSQL index's values must be when they are decoded, and how a read survives a
server restart (issue 51, Medium 8).

Damage. A table edited by hand or by another program can hold any value its column type
allows: `sections` a JSON string, `meta` values that are not objects, `arrays` bytes that are
pickled, truncated or of a string dtype. Each is checked where it is decoded, and a wrong one is
`damaged(loc, "TABLE/COLUMN", why)`: "store damaged", a StoreError (exit 3, 503 on a page), as
the embedded store's "index files damaged" (store/shapes.py), never a traceback.

Restarts. A connection whose server restarted is dead: its next statement raises
OperationalError (or InterfaceError) and psycopg marks it closed. `retried` runs a read once
more on a fresh connection when that happens; when the second try fails too (the server is
still down) the error is `lost(...)`'s StoreError, so a page answers 503 and, once the server
is back, the next request reconnects and answers again.
"""

from __future__ import annotations

import io
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from glassrag.errors import StoreError
from glassrag.store.pgschema import Location, lost
from glassrag.store.shapes import KIND_NAMES, STORED

T = TypeVar("T")
# what a value decoded from the store can raise when it is not what glassrag wrote
DECODING = (ValueError, TypeError, KeyError, AttributeError, IndexError, EOFError, RecursionError)


def damaged(loc: Location, where: str, why: object) -> StoreError:
    """The error for a value of `where` (TABLE/COLUMN, a row named after a space) that is not
    what glassrag writes there."""
    reason = why if isinstance(why, str) else f"{type(why).__name__}: {str(why)[:200]}"
    return StoreError(f"store damaged: {loc} {where}: {reason}",
                      f"re-ingest: drop the schema (DROP SCHEMA {loc.schema} CASCADE) and run "
                      "glassrag ingest PATH --store URL again")


def retried(connection: Callable[[], Any], work: Callable[[Any], T], loc: Location,
            doing: str = "reading") -> T:
    """`work(connection())`, run once more on a fresh connection when the first one was dead
    (the server restarted or ended the session); any psycopg error left is `lost`'s StoreError."""
    import psycopg

    for attempt in (1, 2):
        conn = connection()
        try:
            return work(conn)
        except (psycopg.OperationalError, psycopg.InterfaceError) as e:
            if attempt == 2 or not conn.closed:
                raise lost(loc, e, doing) from None
        except psycopg.Error as e:
            raise lost(loc, e, doing) from None
    raise AssertionError("unreachable")


def streamed_retried(connection: Callable[[], Any], rows: Callable[[Any], Iterator[T]], loc: Location,
                     doing: str = "reading") -> Iterator[T]:
    """The rows of `rows(conn)`, started again on a fresh connection when the first connection
    was dead before any row came; an error after that is `lost`'s StoreError."""
    import psycopg

    for attempt in (1, 2):
        conn, given = connection(), False
        try:
            for row in rows(conn):
                given = True
                yield row
            return
        except (psycopg.OperationalError, psycopg.InterfaceError) as e:
            if attempt == 2 or given or not conn.closed:
                raise lost(loc, e, doing) from None
        except psycopg.Error as e:
            raise lost(loc, e, doing) from None


def an_object(loc: Location, where: str, value: Any, missing: Any = None) -> Any:
    """`value` when it is a JSON object (`missing` when it is None/absent), else `damaged`."""
    if value is None:
        return missing
    if not isinstance(value, dict):
        raise damaged(loc, where, f"holds {type(value).__name__} {str(value)[:60]!r}, where an object belongs")
    return value


def an_array(loc: Location, where: str, data: object, kinds: str = STORED) -> np.ndarray:
    """The .npy bytes `data` as an array of one of `kinds` (never unpickled), else `damaged`."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise damaged(loc, where, f"holds {type(data).__name__}, where .npy bytes belong")
    try:
        array = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    except DECODING as e:  # pickled, truncated, not .npy
        raise damaged(loc, where, f"not a .npy array glassrag wrote ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(array, np.ndarray) or array.dtype.kind not in kinds:
        raise damaged(loc, where, f"holds {getattr(array, 'dtype', type(array).__name__)}, where "
                                  f"{KIND_NAMES.get(kinds, kinds)} belong")
    return array


def block(loc: Location, keys: bytes, impacts: bytes) -> tuple[np.ndarray, np.ndarray]:
    """A `blocks` row's keys (int8) and impacts (float4), both bytea in network order, one
    impact a key; else `damaged`."""
    if len(keys) % 8 or len(impacts) % 4 or len(keys) // 8 != len(impacts) // 4:
        raise damaged(loc, "blocks/keys and impacts", f"{len(keys)} and {len(impacts)} bytes, not one "
                                                      "8-byte key for each 4-byte impact")
    return np.frombuffer(keys, ">i8"), np.frombuffer(impacts, ">f4")
