"""Exhibit 1, where the cuts land: the documents cut by a chunker of the user's choice, the
cut positions in one document, and the share of labelled answers a chunk holds whole,
measured beside the closed forms of fixed-size chunking (glassrag/chunk/theory.py).

With a text of N units cut into windows of s units overlapping by o:

    chunks          n = ⌈(N − o) / (s − o)⌉          (1 when N ≤ s)
    P(cut)          ≈ (L − 1 − o) / (s − o)           for an answer of L units, clipped to [0, 1]
    P(intact)       = Π over the question's answers of (1 − P(cut))

"Answer intact" is what `glassrag eval` reports as `ranking answer_intact`: the share of
answerable questions whose every verbatim answer lies whole inside one chunk (a question
labelled without a verbatim text counts as intact, as in evaluate/relevance.py). The
chunks come from glassrag's own chunkers (CHUNKERS), the verdict from its Judge.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from glassrag.chunk import CHUNKERS, make_chunker
from glassrag.chunk.theory import chunk_count, cut_probability
from glassrag.chunk.units import UNITS, count_units
from glassrag.errors import ConfigError
from glassrag.evaluate.golden import Question
from glassrag.evaluate.relevance import Judge
from glassrag.lab.base import LabBench, choice, setting
from glassrag.schema import Chunk, Document

CHOICES = tuple(n for n in CHUNKERS if n != "document")  # "document" does not cut
SIZES = {"words": (25, 50, 100, 150, 200, 300, 400), "tokens": (25, 50, 100, 150, 200, 300, 400),
         "chars": (150, 300, 600, 900, 1200, 1800, 2400)}
MAX_SIZE = 5000
MIN_SIZE = {"words": 10, "tokens": 10, "chars": 50}  # smaller cuts make tens of thousands of chunks


def settings(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    """The chunker, unit, size, overlap and document a page asks for (the index's own by default)."""
    own = bench.index.config.chunk
    chunker = choice(params, "chunker", own.chunker if own.chunker in CHOICES else "fixed", CHOICES)
    unit = setting(params, "unit", "chunk.unit", own.unit)
    size = setting(params, "size", "chunk.size", own.size, (MIN_SIZE[unit], MAX_SIZE))
    overlap = setting(params, "overlap", "chunk.overlap", min(own.overlap, size // 2), (0, MAX_SIZE))
    if overlap > size // 2:
        raise ConfigError(f"overlap = {overlap} is more than half of size = {size}",
                          f"give an overlap from 0 to {size // 2} (more would hold every word in three chunks "
                          "or more, and make the page slow)")
    split = choice(params, "split", "all", ("all", "train", "test"))
    docs = sorted(bench.index.documents)
    doc = params.get("doc") or _busiest(bench, docs)
    if doc not in bench.index.documents:
        raise ConfigError(f"doc = {doc[:60]!r} is not a document of this index",
                          "choose one of: " + ", ".join(docs[:20]) + (" …" if len(docs) > 20 else ""))
    return {"chunker": chunker, "unit": unit, "size": size, "overlap": overlap, "split": split, "doc": doc}


def costly(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    """Everything but the document shown: another chunker, unit, size, overlap or split cuts
    the whole corpus again (a curve of sizes) and checks every question of the split."""
    return {k: v for k, v in settings(bench, params).items() if k != "doc"}


def _busiest(bench: LabBench, docs: list[str]) -> str:
    """The document most labelled answers point to (the first when none)."""
    counts: dict[str, int] = {}
    for q in bench.questions:
        for a in q.answers:
            counts[a.doc] = counts.get(a.doc, 0) + 1
    return max(docs, key=lambda d: (counts.get(d, 0), -docs.index(d))) if docs else ""


def cut(bench: LabBench, chunker: str, unit: str, size: int, overlap: int) -> dict[str, list[Chunk]]:
    """Every document's chunks with these settings (glassrag's own chunker)."""
    made = make_chunker(chunker, size=size, overlap=overlap, unit=unit)
    return {d.id: made.chunk(d) for d in bench.index.documents.values()}


def intact(chunks: Sequence[Chunk], questions: Sequence[Question]) -> dict[str, bool]:
    """Question id → every verbatim answer lies whole in some chunk (answerable questions)."""
    judge = Judge(chunks)
    return {q.id: judge.judge(q).intact for q in questions if q.answerable}


def predicted_intact(questions: Sequence[Question], unit: str, size: int, overlap: int) -> float | None:
    """Mean over answerable questions of Π (1 − P(cut)) over their verbatim answers."""
    values = []
    for q in questions:
        if not q.answerable:
            continue
        p = 1.0
        for a in q.answers:
            if a.text:
                p *= 1.0 - cut_probability(max(count_units(a.text, unit), 1), size, overlap)
        values.append(p)
    return sum(values) / len(values) if values else None


def predicted_count(documents: Sequence[Document], unit: str, size: int, overlap: int) -> int:
    """Σ over documents of ⌈(N − o) / (s − o)⌉: the fixed chunker's count."""
    return sum(chunk_count(count_units(d.text, unit), size, overlap) for d in documents)


def point(bench: LabBench, chunker: str, unit: str, size: int, overlap: int, split: str) -> dict[str, Any]:
    """Measured and predicted count and intact rate at one size, kept per generation (the
    numbers only: a corpus's chunks are cut again when asked for)."""
    def compute() -> dict[str, Any]:
        questions = bench.split(split)
        by_doc = cut(bench, chunker, unit, size, overlap)
        chunks = [c for cs in by_doc.values() for c in cs]
        verdicts = intact(chunks, questions)
        docs = list(bench.index.documents.values())
        return {"size": size, "overlap": overlap, "chunks": len(chunks),
                "predicted_chunks": predicted_count(docs, unit, size, overlap),
                "intact": sum(verdicts.values()) / len(verdicts) if verdicts else None,
                "predicted_intact": predicted_intact(questions, unit, size, overlap),
                "questions": len(verdicts), "verdicts": verdicts}

    return bench.remember(("cuts-point", chunker, unit, size, overlap, split), compute)


def exhibit(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    s = settings(bench, params)
    questions = bench.split(s["split"])
    here = dict(point(bench, s["chunker"], s["unit"], s["size"], s["overlap"], s["split"]))
    curve = [{k: v for k, v in point(bench, s["chunker"], s["unit"], size, s["overlap"], s["split"]).items()
              if k != "verdicts"} for size in sorted({*SIZES[s["unit"]], s["size"]}) if s["overlap"] <= size // 2]
    doc = bench.index.documents[s["doc"]]
    made = make_chunker(s["chunker"], size=s["size"], overlap=s["overlap"], unit=s["unit"])
    chunks = sorted(made.chunk(doc), key=lambda c: c.start)
    verdicts = here.pop("verdicts")
    return {
        "settings": s, "choices": {"chunker": list(CHOICES), "unit": list(UNITS)},
        "index_chunking": bench.index.config.to_dict()["chunk"],
        "measured": here, "curve": curve,
        "fixed": s["chunker"] == "fixed",
        "document": {"id": doc.id, "title": doc.title, "units": count_units(doc.text, s["unit"]), "text": doc.text,
                     "chunks": [{"n": n, "start": c.start, "end": c.end, "locator": c.locator, "id": c.id,
                                 "units": count_units(c.text, s["unit"])} for n, c in enumerate(chunks, 1)],
                     "predicted_chunks": chunk_count(count_units(doc.text, s["unit"]), s["size"], s["overlap"])},
        "documents": sorted(bench.index.documents),
        "questions": [_question_row(q, verdicts.get(q.id)) for q in questions],
    }


def _question_row(q: Question, whole: bool | None) -> dict[str, Any]:
    passage = " · ".join(a.text or f"{a.doc} {a.locator}".strip() for a in q.answers)
    return {"id": q.id, "split": q.split, "kind": q.kind, "question": q.question, "answer": passage,
            "docs": list(q.answer_docs), "intact": whole}
