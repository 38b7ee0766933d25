"""BEIR folders (`corpus.jsonl`, `queries.jsonl`, `qrels/*.tsv`): each corpus line is one
document of title + text, indexed as one chunk, as the published BEIR runs do."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterator

from glassrag.errors import IngestError
from glassrag.schema import Document, Section


def is_beir(path: Path) -> bool:
    return path.is_dir() and (path / "corpus.jsonl").is_file() and (path / "queries.jsonl").is_file()


def load_beir_corpus(folder: Path) -> Iterator[Document | IngestError]:
    """Documents of `corpus.jsonl`, or an IngestError for each bad line (the rest go on)."""
    path = folder / "corpus.jsonl"
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                doc_id, title, body = str(row["_id"]), row.get("title") or "", row.get("text") or ""
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                yield IngestError(f"{path}:{n}", f"not a BEIR corpus line ({type(err).__name__}: {err})",
                                  'each line needs {"_id", "title", "text"}')
                continue
            text = f"{title} {body}".strip() if title else body.strip()
            if not text:
                yield IngestError(f"{path}:{n}", f"document {doc_id!r} has no text")
                continue
            yield Document(
                id=doc_id, title=title or doc_id, source=f"{path}:{n}", format="beir", text=text,
                sections=(Section("", 0, len(text)),), metadata={},
                content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest()[:16],
            )
