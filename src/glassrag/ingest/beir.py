"""BEIR folders (`corpus.jsonl`, `queries.jsonl`, `qrels/*.tsv`): each corpus line is one
document of title + text, indexed as one chunk, as the published BEIR runs do."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterator

from glassrag.errors import IngestError, visible
from glassrag.schema import Document, Section


def is_beir(path: Path) -> bool:
    return path.is_dir() and (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file()


def load_beir_corpus(folder: Path) -> Iterator[Document | IngestError]:
    """Documents of `corpus.jsonl`, or an IngestError naming the file and line for each bad
    line (the rest go on): not UTF-8, not JSON (nested too deep, a number too long), an `_id`
    that is not a non-empty string or holds a control character (a NUL would be dropped by the
    index's fixed-width id arrays, and "d2\\x00" would become "d2"), a title or text that is
    not a string, or text that cannot be written as UTF-8 (a lone surrogate)."""
    path = folder / "corpus.jsonl"
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            where = f"{visible(str(path))}:{n}"
            try:
                row = parse_line(raw)
            except ValueError as err:
                yield IngestError(where, f"not a BEIR corpus line: {err}",
                                  'each line is one UTF-8 JSON object {"_id", "title", "text"}; this line is skipped')
                continue
            doc_id, title, body = row["_id"], row.get("title") or "", row.get("text") or ""
            text = f"{title} {body}".strip() if title else body.strip()
            if not text:
                yield IngestError(where, f"document {visible(doc_id)!r} has no text")
                continue
            yield Document(
                id=doc_id, title=title or doc_id, source=f"{path}:{n}", format="beir", text=text,
                sections=(Section("", 0, len(text)),), metadata={},
                content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
            )


_JSON_NAMES = {list: "list", dict: "object", int: "number", float: "number", bool: "true/false", str: "string"}
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def parse_line(raw: bytes) -> dict[str, Any]:
    """One corpus line as {"_id": str, "title": str, "text": str, ...}, or ValueError saying
    what is wrong with it."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 (byte 0x{raw[err.start]:02x} at column {err.start + 1})") from None
    try:
        row = json.loads(line)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    except ValueError as err:  # JSONDecodeError, or an integer longer than Python converts
        if "integer string conversion" in str(err):
            raise ValueError("a number longer than Python reads (over 4,300 digits)") from None
        raise ValueError(f"not JSON ({err})") from None
    if not isinstance(row, dict):
        raise ValueError(f"a JSON {_JSON_NAMES.get(type(row), 'value')}, not an object")
    doc_id = row.get("_id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise ValueError("'_id' should be a non-empty string")
    if _CONTROL.search(doc_id):
        raise ValueError(f"'_id' {visible(doc_id)!r} holds a control character")
    for key in ("title", "text"):
        if row.get(key) is not None and not isinstance(row[key], str):
            raise ValueError(f"'{key}' should be a string, not a JSON {_JSON_NAMES.get(type(row[key]), 'value')}")
    for key in ("_id", "title", "text"):
        try:
            (doc_id if key == "_id" else row.get(key) or "").encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"'{key}' holds a lone surrogate (an escape such as \\ud800 that is no character)") from None
    return {**row, "_id": doc_id}
