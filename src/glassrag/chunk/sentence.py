"""Sentence packing: whole sentences joined up to `size` units; `overlap` carries trailing
whole sentences into the next chunk. A sentence longer than `size` is cut in windows."""

from __future__ import annotations

from glassrag.chunk.base import Chunker
from glassrag.chunk.units import sentence_spans
from glassrag.schema import Document


class SentenceChunker(Chunker):
    name = "sentence"

    def spans(self, doc: Document) -> list[tuple[int, int]]:
        return self.pack(doc.text, sentence_spans(doc.text))
