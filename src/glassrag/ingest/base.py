"""What every loader returns, and the builder loaders use to lay out text and sections."""

from __future__ import annotations

import importlib
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from glassrag.schema import Section


@dataclass(frozen=True)
class Extracted:
    """A loader's output before the document gets its id: title, full text, sections."""

    title: str
    text: str
    sections: tuple[Section, ...]
    format: str
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


# The most characters a loader may extract from the file being read (ingest/__init__.py sets
# it per file from --max-text-mb and --max-text-ratio): a 0.47 MB DOCX once became 59 MB of
# text. TextBuilder stops as soon as its text passes it, so the work is bounded too.
TEXT_LIMIT: ContextVar[int | None] = ContextVar("TEXT_LIMIT", default=None)


class TextTooLarge(Exception):
    """The extracted text passed TEXT_LIMIT (load_document names the file and the limit)."""

    def __init__(self, length: int) -> None:
        super().__init__(f"{length} characters")
        self.length = length


class TextBuilder:
    """Appends blocks of text, opening a new section at each heading or page.

    Blocks are separated by a newline; a section runs from its opening to the next one.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._open: tuple[str, int, tuple[str, ...], int] | None = None  # locator, start, path, first part
        self._sections: list[Section] = []

    def open_section(self, locator: str, heading_path: tuple[str, ...] = ()) -> None:
        self._close()
        self._open = (locator, self._length, heading_path, len(self._parts))

    def add(self, block: str) -> None:
        if self._open is None:
            self.open_section("")
        if self._parts:
            self._parts.append("\n")
            self._length += 1
        self._parts.append(block)
        self._length += len(block)
        limit = TEXT_LIMIT.get()
        if limit is not None and self._length > limit:
            raise TextTooLarge(self._length)

    def _close(self) -> None:
        if self._open is None:
            return
        locator, start, path, part = self._open
        if self._length > start:
            # a section starts after the separator that joined it: skip the newlines that open
            # its own parts (not the whole text joined per section: that was quadratic)
            while part < len(self._parts):
                newlines = len(self._parts[part]) - len(self._parts[part].lstrip("\n"))
                start += newlines
                if newlines < len(self._parts[part]):
                    break
                part += 1
            self._sections.append(Section(locator, start, self._length, path))
        self._open = None

    def build(self) -> tuple[str, tuple[Section, ...]]:
        self._close()
        return "".join(self._parts), tuple(self._sections)


HEADING = "§ "
PATH_SEPARATOR = " › "
BEFORE_HEADINGS = "§ (start)"  # the locator of text before a document's first heading


def heading_locators(sections: tuple[Section, ...]) -> tuple[Section, ...]:
    """Sections located by a heading (`§ …`) with enough of their heading path to tell
    them apart: the shortest end of the path that no other section's path ends with
    (`§ V2 Authentication › Control Objective` where every chapter has a `Control
    Objective`; `§ Refunds` where the heading is unique). Sections whose whole paths are
    the same keep the whole path: nothing tells them apart."""
    # owner[tail]: the one distinct path that ends with tail, or None when several do; one pass
    # over every path's ends, so the work is the sum of path lengths squared, not sections²
    owner: dict[tuple[str, ...], tuple[str, ...] | None] = {}
    for path in dict.fromkeys(s.heading_path for s in sections if s.locator.startswith(HEADING) and s.heading_path):
        for k in range(1, len(path) + 1):
            tail = path[-k:]
            owner[tail] = path if tail not in owner else None
    out = []
    for s in sections:
        path = s.heading_path
        if not (s.locator.startswith(HEADING) and path):
            out.append(s)
            continue
        tail = next((path[-k:] for k in range(1, len(path) + 1) if owner[path[-k:]] == path), path)
        out.append(replace(s, locator=HEADING + PATH_SEPARATOR.join(tail)))
    return tuple(out)


EXTRA_HINT = "pip install 'glassrag[docs]'"


def require_extra(module: str, path: Path, package: str = "") -> ModuleType:
    """Import an optional package a loader needs, or say which extra installs it.

    Loaders import their packages here, when a file of their kind is read, so that
    `import glassrag` works without the `docs` extra."""
    from glassrag.errors import IngestError

    try:
        return importlib.import_module(module)
    except ImportError:
        raise IngestError(
            str(path), f"reading {path.suffix.lower() or 'these'} files needs the optional "
            f"package {package or module}, which is not installed", EXTRA_HINT) from None


def decode(path: Path, data: bytes) -> str:
    """Bytes to text: UTF-8 (with or without BOM), else UTF-16 with BOM; CRLF made LF."""
    from glassrag.errors import IngestError

    if data.startswith(b"\xff\xfe") or data.startswith(b"\xfe\xff"):
        text = data.decode("utf-16")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise IngestError(
                str(path),
                f"not UTF-8 text (bad byte at offset {err.start})",
                "save the file as UTF-8, or check that its extension matches its content",
            ) from None
    if "\x00" in text:
        raise IngestError(str(path), "contains NUL bytes: looks binary, not text",
                          "check that the file extension matches its content")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def office_metadata(props: Any) -> dict[str, Any]:
    """`date` (last modified, else created) and `author` from an Office file's core
    properties (python-docx, python-pptx and openpyxl share the shape)."""
    metadata: dict[str, Any] = {}
    when = props.modified or props.created
    if when is not None:
        metadata["date"] = when.date().isoformat()
    if props.author:
        metadata["author"] = props.author
    return metadata
