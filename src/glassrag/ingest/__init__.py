"""Ingestion: walk paths, pick a loader by file extension, return Documents and problems.

Loaders are found in one table, `LOADERS`, keyed by extension, each named as `module:function`
of this package and imported when a file of its kind is first read (a question imports none:
an index only needs `versions`). PDF, PPTX, XLSX and DOCX need the optional packages of the
`docs` extra; they are always listed, and import their package only when a file of their kind
is read, so a missing package is reported per file (`pip install 'glassrag[docs]'`) and never
breaks `import glassrag`. Every document's extraction is checked (`glassrag.ingest.quality`);
findings come back as warnings.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from glassrag.errors import IngestError, UnknownNameError
from glassrag.ingest.base import TEXT_LIMIT, Extracted, TextTooLarge
from glassrag.schema import Document

LOADERS: dict[str, str] = {
    ".txt": "text:load_text",
    ".text": "text:load_text",
    ".md": "markdown:load_markdown",
    ".markdown": "markdown:load_markdown",
    ".html": "html:load_html",
    ".htm": "html:load_html",
    ".pdf": "pdf:load_pdf",
    ".pptx": "pptx:load_pptx",
    ".xlsx": "xlsx:load_xlsx",
    ".docx": "docx:load_docx",
}

MB = 1024 * 1024  # what --max-mb counts in
# The text a file may give: at most MAX_TEXT_MB, and at most MAX_TEXT_RATIO times the file's
# size (but always 1 MB). Measured on the ten real documents of tests/fixtures/real/docs
# (PDF, DOCX, PPTX, XLSX): characters extracted per file byte 0.03-2.27, the largest a
# spreadsheet (datacall-release.xlsx); 20 is about 9 times that, and the audit's DOCX bomb gave 125.
MAX_TEXT_MB = 100.0
MAX_TEXT_RATIO = 20.0
MAX_BYTES = 100 * MB


def loader_for(path: Path) -> Callable[[Path, bytes], Extracted]:
    suffix = path.suffix.lower()
    if suffix not in LOADERS:
        raise UnknownNameError("file type", suffix or "(no extension)", list(LOADERS))
    module, function = LOADERS[suffix].split(":")
    return getattr(importlib.import_module(f"glassrag.ingest.{module}"), function)


@dataclass
class Walk:
    """The files found under some paths, with what was skipped and why."""

    files: list[tuple[Path, Path]] = field(default_factory=list)  # (file, root it was found under)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    problems: list[IngestError] = field(default_factory=list)


def shown(path: Path | str) -> str:
    """A path as text that can be printed and saved: bytes of a file name that are not
    UTF-8 (kept by Python as lone surrogates) become U+FFFD replacement characters."""
    return os.fsencode(str(path)).decode("utf-8", "replace")


def _not_utf8(path: Path) -> IngestError | None:
    """A problem when the path's name is not UTF-8: its id and source could not be stored."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return IngestError(shown(path), "file name is not valid UTF-8",
                           "rename the file (e.g. convmv -f latin1 -t utf8 --notest FILE)")
    return None


def walk(paths: list[Path]) -> Walk:
    """Every supported file under `paths`, sorted; hidden files and folders are passed over,
    symlinked folders are followed once (a loop is reported, not followed) when they stay
    inside the folder given; a link leaving it is a problem, per link, and not read. A file
    whose path is not UTF-8 and a folder that cannot be listed are problems, not crashes."""
    found = Walk()
    for root in paths:
        if not root.exists():
            found.problems.append(IngestError(str(root), "no such file or folder",
                                              "check the path"))
            continue
        if root.is_file():
            bad_name = _not_utf8(root)
            if bad_name is not None:
                found.problems.append(bad_name)
            elif root.suffix.lower() in LOADERS:
                found.files.append((root, root.parent))
            else:
                found.problems.append(IngestError(
                    shown(root), f"unsupported file type {root.suffix or '(none)'}",
                    f"supported: {', '.join(sorted(LOADERS))}"))
            continue
        seen: set[tuple[int, int]] = set()

        def unreadable(e: OSError) -> None:
            found.problems.append(IngestError(shown(e.filename), f"cannot read folder: {e.strerror}",
                                              "check the folder's permissions; nothing in it was read"))

        inside = root.resolve()
        for folder, dirs, files in os.walk(root, onerror=unreadable, followlinks=True):
            st = os.stat(folder)
            if (st.st_dev, st.st_ino) in seen:
                found.skipped.append((shown(folder), "symlink loop: folder already visited"))
                dirs[:] = []
                continue
            seen.add((st.st_dev, st.st_ino))
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                             and _inside(Path(folder) / d, inside, root, found))
            for name in sorted(files):
                if name.startswith("."):
                    continue
                path = Path(folder) / name
                if not _inside(path, inside, root, found):
                    continue
                if path.suffix.lower() not in LOADERS:
                    found.skipped.append((shown(path), f"unsupported type {path.suffix or '(none)'}"))
                elif (bad_name := _not_utf8(path)) is not None:
                    found.problems.append(bad_name)
                else:
                    found.files.append((path, root))
    return found


def _inside(path: Path, inside: Path, root: Path, found: Walk) -> bool:
    """Whether `path`, its links followed, lies inside the folder `inside` (the root given,
    resolved); a link that leaves it is a problem of its own and is not read: a shared corpus
    must not make a system file, or the user's, a served document."""
    if not path.is_symlink():
        return True  # an entry of a folder already inside (each folder is checked as it is entered)
    try:
        real = path.resolve(strict=False)
    except (OSError, RuntimeError):  # a link loop
        real = None
    if real is not None and real.is_relative_to(inside):
        return True
    found.problems.append(IngestError(
        shown(path), f"a symbolic link to outside {shown(root)}: not read",
        "copy the file into the folder if it belongs to the corpus; links that leave the folder "
        "given to ingest are never followed"))
    return False


def document_ids(files: list[tuple[Path, Path]]) -> list[str]:
    """A readable id per file: its path below its root without the extension
    (`manuals/tx200`); files that would share an id keep their extension."""
    stems = [_rel(p, r).with_suffix("").as_posix() for p, r in files]
    counts: dict[str, int] = {}
    for s in stems:
        counts[s] = counts.get(s, 0) + 1
    return [s if counts[s] == 1 else _rel(p, r).as_posix() for s, (p, r) in zip(stems, files)]


def _rel(path: Path, root: Path) -> Path:
    try:
        return path.relative_to(root)
    except ValueError:
        return Path(path.name)


def read_bytes(path: Path, max_bytes: int = MAX_BYTES) -> bytes:
    try:
        size = path.stat().st_size
    except OSError as err:
        raise IngestError(str(path), f"cannot read: {err.strerror}") from None
    if size == 0:
        raise IngestError(str(path), "empty file (0 bytes)", "remove it or give it content")
    if size > max_bytes:
        raise IngestError(
            str(path), f"too large: {size / MB:.1f} MB, the limit is {max_bytes / MB:.4g} MB",
            "raise the limit with --max-mb, or split the file")
    try:
        return path.read_bytes()
    except OSError as err:
        raise IngestError(str(path), f"cannot read: {err.strerror}",
                          "check the file's permissions") from None


# what an empty extraction means, by format: only a PDF is, in practice, a scan
EMPTY_HINT = {
    ".pdf": "if it is a scan, it needs OCR before glassrag can read it",
    ".docx": "the document holds no text (empty paragraphs and tables, or only pictures); "
             "fill it in, or leave it out of the folder",
    ".pptx": "the slides hold no text (only pictures or empty boxes); leave the deck out, or add text",
    ".xlsx": "every sheet is empty; fill one in, or leave the workbook out of the folder",
}


def text_limit(file_bytes: int, max_text_mb: float = MAX_TEXT_MB, max_text_ratio: float = MAX_TEXT_RATIO) -> int:
    """The most characters a file of `file_bytes` may give: max_text_ratio × its size, at
    least 1 MB, at most max_text_mb."""
    return int(min(max_text_mb * MB, max(max_text_ratio * file_bytes, MB)))


def load_document(path: Path, doc_id: str, data: bytes, max_text_mb: float = MAX_TEXT_MB,
                  max_text_ratio: float = MAX_TEXT_RATIO) -> tuple[Document, tuple[str, ...]]:
    """Run the file's loader and check its extraction; returns the document and any
    warnings (the loader's, then the quality check's when its verdict is not `ok`). A file
    whose text passes text_limit is refused as soon as the loader passes it."""
    limit = text_limit(len(data), max_text_mb, max_text_ratio)

    def too_large(length: int) -> IngestError:
        return IngestError(str(path), f"its text is too large: over {length / MB:.1f} MB of text from a "
                                      f"{len(data) / MB:.2f} MB file; the limit is {limit / MB:.3g} MB "
                                      f"({max_text_ratio:g} × the file, at least 1 MB, at most {max_text_mb:g} MB)",
                           "raise the limit with --max-text-mb or --max-text-ratio if the file is genuine; "
                           "it was skipped")
    token = TEXT_LIMIT.set(limit)
    try:
        extracted = loader_for(path)(path, data)
    except IngestError:
        raise
    except TextTooLarge as err:
        raise too_large(err.length) from None
    except Exception as err:  # a parser's own error: say which file, keep going elsewhere
        raise IngestError(str(path), f"could not be parsed: {type(err).__name__}: {err}",
                          "check that the file opens in its usual program") from err
    finally:
        TEXT_LIMIT.reset(token)
    if len(extracted.text) > limit:  # a loader that does not build with TextBuilder
        raise too_large(len(extracted.text))
    if not extracted.text.strip():
        raise IngestError(str(path), "no text could be extracted", EMPTY_HINT.get(
            path.suffix.lower(), "the file holds no text; add some, or leave it out of the folder"))
    doc = Document(
        id=doc_id,
        title=extracted.title,
        source=str(path),
        format=extracted.format,
        text=extracted.text,
        sections=extracted.sections,
        metadata=extracted.metadata,
        content_hash=file_hash(data),
    )
    from glassrag.ingest import quality

    found = quality.check(doc)
    notes = tuple(f"extraction quality {found['verdict']}: {reason}" for reason in found["reasons"])
    return doc, extracted.warnings + notes


def file_hash(data: bytes) -> str:
    """The content hash that identifies an unchanged file: SHA-256, 16 hex digits."""
    return hashlib.sha256(data).hexdigest()[:16]


__all__ = ["LOADERS", "walk", "shown", "document_ids", "read_bytes", "load_document",
           "file_hash", "Walk"]
