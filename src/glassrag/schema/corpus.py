"""The documents an index is built from and the chunks it holds: Document, its Sections (each
with its locator) and Chunk, frozen dataclasses with to_dict/from_dict. Ids are content hashes,
so the same text always gets the same id and an unchanged file can be recognised and its chunks
reused."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping, Self


def content_hash(*parts: str, length: int = 16) -> str:
    """Hex SHA-256 of the parts joined by a unit separator, cut to `length` characters."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:length]


class _Plain:
    """to_dict/from_dict for frozen dataclasses whose fields are JSON-safe or nested _Plain."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass(frozen=True)
class Section(_Plain):
    """A stretch of a document's text with one locator: `§ 2.3 Returns`, `page 4`, `slide 2`.

    `start`/`end` are character offsets into `Document.text`; `heading_path` lists the
    headings above it, outermost first.
    """

    locator: str
    start: int
    end: int
    heading_path: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:  # what asdict gives, without its recursion (ingest writes one a section)
        return {"locator": self.locator, "start": self.start, "end": self.end, "heading_path": self.heading_path}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(data["locator"], data["start"], data["end"], tuple(data.get("heading_path", ())))


@dataclass(frozen=True)
class Document(_Plain):
    """One source file after extraction: its whole text and the sections that cover it."""

    id: str
    title: str
    source: str
    format: str
    text: str
    sections: tuple[Section, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    content_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["metadata"] = dict(self.metadata)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            id=data["id"],
            title=data["title"],
            source=data["source"],
            format=data["format"],
            text=data["text"],
            sections=tuple(Section.from_dict(s) for s in data["sections"]),
            metadata=dict(data.get("metadata", {})),
            content_hash=data.get("content_hash", ""),
        )

    def section_text(self, section: Section) -> str:
        return self.text[section.start : section.end]


@dataclass(frozen=True)
class Chunk(_Plain):
    """A passage that is indexed and can be shown: a verbatim span `text == doc.text[start:end]`."""

    id: str
    doc_id: str
    locator: str
    text: str
    start: int
    end: int
    position: int
    heading_path: tuple[str, ...] = ()

    @classmethod
    def make(
        cls,
        doc_id: str,
        locator: str,
        text: str,
        start: int,
        end: int,
        position: int,
        heading_path: tuple[str, ...] = (),
    ) -> "Chunk":
        cid = content_hash(doc_id, str(start), str(end), text)
        return cls(cid, doc_id, locator, text, start, end, position, heading_path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:  # by name, not through fields(): a table read parses one a row
        return cls(data["id"], data["doc_id"], data["locator"], data["text"], data["start"], data["end"],
                   data["position"], tuple(data.get("heading_path", ())))
