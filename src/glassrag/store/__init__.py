"""Index storage: the Index data and its backends (a folder, or a PostgreSQL schema)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from glassrag.store.base import FORMAT_VERSION, Embedded, Index, IndexStore
from glassrag.store.embedded import EmbeddedStore
from glassrag.store.pgschema import is_postgres

__all__ = ["FORMAT_VERSION", "Embedded", "EmbeddedStore", "Index", "IndexStore", "is_postgres", "open_store"]


def open_store(location: str | Path, wait: float = 60.0, notify: Callable[[str], None] | None = None) -> Any:
    """The store at `location`: a PostgreSQL schema for a postgresql:// URL (?schema=NAME),
    else the embedded store of a folder."""
    if is_postgres(str(location)):
        from glassrag.store.postgres import PostgresStore

        return PostgresStore(str(location), wait=wait, notify=notify)
    return EmbeddedStore(location, wait=wait, notify=notify)
