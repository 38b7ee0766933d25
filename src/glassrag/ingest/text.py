"""Plain text: one section; chunks in it are located by line numbers."""

from __future__ import annotations

from pathlib import Path

from glassrag.ingest.base import Extracted, TextBuilder, decode


def load_text(path: Path, data: bytes) -> Extracted:
    text = decode(path, data).strip("\n")
    builder = TextBuilder()
    builder.open_section("lines")
    builder.add(text)
    full, sections = builder.build()
    first = next((line.strip() for line in full.splitlines() if line.strip()), path.stem)
    title = first if len(first) <= 80 else path.stem
    return Extracted(title=title, text=full, sections=sections, format="text")
