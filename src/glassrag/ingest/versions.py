"""Which document supersedes which, read from the metadata a document carries: `superseded_by: ID`
on the old document or `supersedes: ID` on the new one (either is enough). The stores keep the
result with the index; the versions stage (glassrag/rerank/versions.py) demotes or drops the old.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from glassrag.schema import Document


def superseded(documents: Mapping[str, Document],
               linked: Iterable[Document] | None = None) -> dict[str, str]:
    """old document id -> the indexed document that supersedes it. `linked`, when the caller
    collected them, are the documents with `superseded_by` or `supersedes` (only they can
    name another version), so the rest are not read again."""
    out: dict[str, str] = {}
    for doc in documents.values() if linked is None else linked:
        newer = doc.metadata.get("superseded_by")
        if newer and newer in documents:
            out[doc.id] = newer
        older = doc.metadata.get("supersedes")
        if older and older in documents:
            out[older] = doc.id
    return out
