"""Index storage: the Index data and its backends."""

from glassrag.store.base import FORMAT_VERSION, Embedded, Index, IndexStore
from glassrag.store.embedded import EmbeddedStore

__all__ = ["FORMAT_VERSION", "Embedded", "EmbeddedStore", "Index", "IndexStore"]
