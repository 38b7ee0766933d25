"""The context header (`chunk.context_header`): the text BM25 and LSA count for a chunk may carry
its document's title and heading path in front; the text shown stays the chunk's own, verbatim.
The indexer and the PostgreSQL store's writer both read it."""

from __future__ import annotations

from glassrag.schema import Chunk, Document


def indexed_text(doc: Document, chunk: Chunk, header: bool) -> str:
    """The text BM25 and LSA see for a chunk: with `header`, the document title and the
    heading path go in front, unless the chunk already starts with them."""
    if not header:
        return chunk.text
    parts = [doc.title, *chunk.heading_path]
    head = [p for p in dict.fromkeys(parts) if p and not chunk.text.startswith(p)]
    return "\n".join([*head, chunk.text])
