"""The documents page as data: every indexed document with its format, sections, chunk
count and extraction-quality verdict, and per document a chunk viewer that shows where
each cut landed (`Chunk.start`/`end` are offsets in `Document.text`)."""

from __future__ import annotations

from typing import Any

from glassrag.schema import Chunk, Document
from glassrag.store import Index
from glassrag.web.catalog import NotFound

SENTENCE_ENDS = ".!?:;|)\"'”’»"


def quality(index: Index, doc_id: str) -> dict[str, Any] | None:
    """The extraction-quality verdict {verdict: ok|warn|bad, reasons: [...]}, when the index has one."""
    found = (index.extra.get("quality") or {}).get(doc_id)
    return found if isinstance(found, dict) else None


def _chunks_by_doc(index: Index) -> dict[str, list[Chunk]]:
    by_doc: dict[str, list[Chunk]] = {}
    for c in index.chunks:
        by_doc.setdefault(c.doc_id, []).append(c)
    return by_doc


def _summary(doc: Document, chunks: list[Chunk], index: Index) -> dict[str, Any]:
    meta = dict(doc.metadata)
    return {"id": doc.id, "title": doc.title, "format": doc.format, "source": doc.source,
            "sections": len(doc.sections), "chunks": len(chunks), "words": len(doc.text.split()),
            "characters": len(doc.text), "date": meta.get("date"),
            "supersedes": meta.get("supersedes"), "superseded_by": meta.get("superseded_by"),
            "locators": [s.locator for s in doc.sections], "quality": quality(index, doc.id)}


def documents_view(index: Index, index_name: str) -> dict[str, Any]:
    by_doc = _chunks_by_doc(index)
    docs = sorted(index.documents.values(), key=lambda d: d.title.casefold())
    rows = [_summary(d, by_doc.get(d.id, []), index) for d in docs]
    verdicts: dict[str, int] = {}
    for r in rows:
        if r["quality"]:
            v = str(r["quality"].get("verdict", "?"))
            verdicts[v] = verdicts.get(v, 0) + 1
    return {"index": index_name, "documents": rows, "chunks": len(index.chunks),
            "settings": index.config.to_dict()["chunk"], "verdicts": verdicts,
            "has_quality": bool(index.extra.get("quality"))}


def clean_cut(text: str, end: int) -> bool:
    """A cut at `end` lands between sentences: at the end of the text, before a line break,
    or after sentence punctuation."""
    if end >= len(text) or text[end] == "\n":
        return True
    before = text[:end].rstrip()
    return not before or before[-1] in SENTENCE_ENDS


def document_view(index: Index, index_name: str, doc_id: str) -> dict[str, Any]:
    doc = index.documents.get(doc_id)
    if doc is None:
        raise NotFound(f"index {index_name!r} has no document {doc_id!r}",
                       f"the documents are listed at /documents?index={index_name}")
    chunks = sorted(_chunks_by_doc(index).get(doc_id, []), key=lambda c: (c.start, c.end))
    text = doc.text
    chunk_rows = [{"id": c.id, "position": c.position, "n": n, "locator": c.locator, "start": c.start,
                   "end": c.end, "words": len(c.text.split()), "clean_end": clean_cut(text, c.end)}
                  for n, c in enumerate(chunks, 1)]
    sections = [{"locator": s.locator, "start": s.start, "end": s.end, "words": len(doc.section_text(s).split()),
                 "chunks": sum(1 for c in chunks if c.start < s.end and c.end > s.start)} for s in doc.sections]
    return {"index": index_name, "document": _summary(doc, chunks, index), "metadata": dict(doc.metadata),
            "content_hash": doc.content_hash, "sections": sections, "chunks": chunk_rows,
            "viewer": viewer(text, chunk_rows)}


def viewer(text: str, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The document text as a sequence of pieces: `cut` markers where a chunk starts or
    ends, and stretches of text with the chunks that cover them (none: text no chunk
    holds; two or more: an overlap)."""
    bounds = sorted({0, len(text), *(c["start"] for c in chunks), *(c["end"] for c in chunks)})
    starts: dict[int, list[dict[str, Any]]] = {}
    ends: dict[int, list[dict[str, Any]]] = {}
    for c in chunks:
        starts.setdefault(c["start"], []).append(c)
        ends.setdefault(c["end"], []).append(c)
    pieces: list[dict[str, Any]] = []
    for a, b in zip(bounds, bounds[1:] + [None]):  # type: ignore[operator]
        for c in ends.get(a, []):
            pieces.append({"cut": "end", "n": c["n"], "id": c["id"], "clean": c["clean_end"]})
        for c in starts.get(a, []):
            pieces.append({"cut": "start", "n": c["n"], "id": c["id"], "locator": c["locator"],
                           "words": c["words"]})
        if b is None or a == b:
            continue
        covering = [c["n"] for c in chunks if c["start"] <= a and c["end"] >= b]
        kind = "gap" if not covering else "overlap" if len(covering) > 1 else ("odd" if covering[0] % 2 else "even")
        pieces.append({"text": text[a:b], "chunks": covering, "kind": kind})
    return pieces
