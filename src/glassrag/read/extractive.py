"""The extractive reader: quotes the one sentence of the packed context that covers most
of the question's terms, or answers "not found" below a coverage threshold. A sentence is
one of prose, whole (read/quotable.py): never code or a table header, hard wraps joined.

    coverage(s) = |question terms ∩ terms(s)| / |question terms|

The threshold is calibrated on the train split by `glassrag calibrate` (highest reader
accuracy); the reader cannot be right more often than the budget holds an answer:
accuracy ≤ recall at the budget.

`Reading` is the reader as a stage: it reads the packed chunks and consults the gate's
decision (a declined question is not read).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from glassrag.query import Query
from glassrag.read.quotable import quotable_sentences
from glassrag.schema import Quote
from glassrag.schema.kind import Kind
from glassrag.stage import Entry, StageOutput, consulted, listed


# chunk texts whose quotable sentences are kept: a chunk's sentences and their terms are the
# same for every question, and finding them was a fifth of a demo ask's time (issue 30)
SENTENCES_KEPT = 4096


@lru_cache(maxsize=SENTENCES_KEPT)
def sentences(text: str, analyze: Callable[[str], list[str]]) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """`quotable_sentences` of a chunk's text, computed once per text and analyser."""
    return tuple(quotable_sentences(text, analyze))


@dataclass
class ExtractiveReader:
    analyze: Callable[[str], list[str]]
    threshold: float = 0.5

    def params(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def read(self, question_terms: set[str], chunks: Sequence[tuple[str, str]]) -> Quote:
        """chunks: (chunk id, text) in context order; the earliest wins a tie."""
        best: tuple[float, str, int, int, str] | None = None
        for chunk_id, text in chunks:
            n = len(question_terms)
            for a, b, terms in sentences(text, self.analyze):
                cov = len(question_terms & terms) / n if n else 0.0
                if best is None or cov > best[0]:
                    best = (cov, chunk_id, a, b, text[a:b])
        if best is None:
            return Quote("", "", 0.0, False, "the context is empty")
        cov, chunk_id, a, b, sentence = best
        if cov < self.threshold:
            return Quote(sentence, chunk_id, cov, False,
                         f"best coverage {cov:.2f} is below the threshold {self.threshold:.2f}: not found")
        return Quote(sentence, chunk_id, cov, True, f"coverage {cov:.2f}", a, b)


def made(index: Any, config: Any, bm25: Any) -> Reading:
    """The reader with the threshold `glassrag calibrate` chose for this index (0.5 before)."""
    threshold = float((index.extra.get("reader") or {}).get("threshold", 0.5))
    return Reading(ExtractiveReader(index.analyzer, threshold), lambda chunk_id: index.chunk(chunk_id).text)


class Reading:
    name = "read"
    kind = Kind.READ

    def __init__(self, reader: ExtractiveReader, text: Callable[[str], str]) -> None:
        self.reader = reader
        self.text = text  # chunk id -> its text

    def params(self) -> dict[str, Any]:
        return self.reader.params()

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        if consulted(inputs).declined:
            quote = Quote("", "", 0.0, False, "not read: the gate declined")
        else:
            quote = self.reader.read(set(query.tokens), [(h.chunk_id, self.text(h.chunk_id))
                                                         for h in listed(inputs).hits])
        return StageOutput(notes=(quote.why,), quote=quote)


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "reader", (f"The reader ranks nothing: it quotes the packed context's sentence that covers most of "
                      f"the question's terms, when that share reaches {params.get('threshold', 0.5)}.")


READERS = {"read": Entry(made, describe_score)}
