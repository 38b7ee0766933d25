"""The matter filter: candidates that are about the document rather than its subject are
dropped before the reranker sees them: reference lists, acknowledgements, link lists and
tables of contents. A paper's bibliography shares many words with a question about the paper
(names, titles, the field's terms) and so ranks, though no question is answered by it.

A chunk is such matter when

- its section's heading (the last of its heading path, "References") is one of `HEADINGS`, or
  its text begins with one on a line of its own (a PDF page's "References");
- or at least `CITED` of its words are citation marks: a year in brackets "(2011)", "doi",
  a URL, "arXiv", "et al.", "pp. 12";
- or at least `LEADERS` of its lines end in dot leaders and a page number ("Scope ..... 4")
  (a table of figures has several numbers after its leaders, a contents line one).

The rules read the chunk alone (no corpus statistics), each decision is kept per chunk for
the pipeline's life, and the trace notes how many chunks each rule dropped.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from glassrag.query import Query
from glassrag.schema import Chunk, Hit
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, ListStage, keeps_scores

HEADINGS = ("references", "bibliography", "acknowledgements", "acknowledgments", "acknowledgement",
            "acknowledgment", "external links", "see also", "further reading", "citations", "works cited",
            "table of contents", "contents", "sources")
CITED = 0.05  # citation marks per word
LEADERS = 0.5  # share of a chunk's lines that are contents lines
_MARK = re.compile(r"\(\d{4}[a-z]?\)|\bdoi\b|https?://|\barxiv\b|\bet al\.|\bpp\.\s*\d", re.IGNORECASE)
_CONTENTS_LINE = re.compile(r"(\.\s*){4,}\s*\d{1,4}\s*$")
_HEADING = re.compile(r"^\W*(" + "|".join(re.escape(h) for h in HEADINGS) + r")\b", re.IGNORECASE)


def made(index: Any, config: Any, bm25: Any) -> MatterFilter | None:
    """The filter `filter.matter` asks for; none when it is off."""
    return MatterFilter(index.chunk) if config.filter.matter else None


def matter(chunk: Chunk) -> str | None:
    """Which rule calls `chunk` matter ("heading", "citations", "contents"), or None."""
    heading = chunk.heading_path[-1].strip() if chunk.heading_path else ""
    text = chunk.text.lstrip()
    named = bool(_HEADING.match(heading)) and len(heading) <= 40
    if named or (_HEADING.match(text[:40]) and _first_line_short(text)):
        return "heading"
    words = len(text.split())
    if words and len(_MARK.findall(text)) / words >= CITED:
        return "citations"
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) >= 3 and sum(bool(_CONTENTS_LINE.search(line)) for line in lines) / len(lines) >= LEADERS:
        return "contents"
    return None


def _first_line_short(text: str) -> bool:
    """A heading line: "References" alone, not a sentence that begins with "Sources of …"."""
    return len(text.splitlines()[0].split()) <= 3


class MatterFilter(ListStage):
    name = "matter"
    kind = Kind.FILTER

    def __init__(self, chunk: Callable[[str], Chunk]) -> None:
        self.chunk = chunk
        self._seen: dict[str, str | None] = {}  # chunk id -> the rule that called it matter

    def params(self) -> dict[str, Any]:
        return {"headings": list(HEADINGS), "cited": CITED, "leaders": LEADERS}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        kept: list[Hit] = []
        dropped: dict[str, int] = {}
        for h in hits:
            if h.chunk_id not in self._seen:
                self._seen[h.chunk_id] = matter(self.chunk(h.chunk_id))
            rule = self._seen[h.chunk_id]
            if rule is None:
                kept.append(Hit(h.chunk_id, h.score, len(kept) + 1, self.name, h.detail))
            else:
                dropped[rule] = dropped.get(rule, 0) + 1
        notes = [f"dropped {n} chunk(s) by the {rule} rule" for rule, n in sorted(dropped.items())]
        return kept, notes


MATTER = {"matter": Entry(made, keeps_scores("chunks about the document rather than its subject dropped"))}
