"""The answer as a stage (issue 29): the first `answer.k` of the packed chunks become the
passages shown, each with its excerpt window and marked answer words; it consults the gate's
decision (a declined question shows its passages as the nearest ones, not as an answer) and
decides the answer's own: declined also when no passage matched. `answer_of` puts the Answer
together from its output.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from glassrag.present import also_found_order
from glassrag.present.excerpt import best_sentence, window
from glassrag.present.highlight import answer_words, asks_for_a_name
from glassrag.query import Query
from glassrag.schema import Answer, Generation, Hit, Passage, Quote, StageTrace
from glassrag.schema.kind import Kind
from glassrag.stage import Decision, Entry, StageOutput, consulted, keeps_scores, listed

NO_MATCH = "no passage matched any word of the question"
# excerpts kept: a chunk's excerpt for a question is the same whatever ranked it, so the
# configurations of a sweep find it once
EXCERPTS_KEPT = 4096

Excerpt = tuple[int, int, tuple[tuple[int, int], ...]]


def made(index: Any, config: Any, bm25: Any) -> Select:
    return Select(index, config.answer.k, config.answer.excerpt_chars, config.answer.neighbours)


class Select:
    """The passages shown: the first k packed chunks, excerpted and marked; with `neighbours`,
    each chunk is shown within its document's text from `neighbours` chunks before it to as many
    after, and cited by the locator of the chunk where the shown window begins."""

    name = "answer"
    kind = Kind.SELECT

    def __init__(self, index: Any, k: int, excerpt_chars: int, neighbours: int = 0) -> None:
        self.index = index
        self.k = k
        self.excerpt_chars = excerpt_chars
        self.neighbours = neighbours

    def params(self) -> dict[str, Any]:
        return {"k": self.k, **({"neighbours": self.neighbours} if self.neighbours else {})}

    def cache_params(self) -> dict[str, Any]:
        """The trace records k; the excerpts shown also depend on their length."""
        return {**self.params(), "excerpt_chars": self.excerpt_chars}

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        gate = consulted(inputs)
        chosen = listed(inputs).hits[: self.k]
        terms = set(query.tokens)
        passages = tuple(self.passage(h, rank, terms, query.question) for rank, h in enumerate(chosen, 1))
        if gate.declined:
            reason = f"the documents do not appear to contain an answer ({gate.why})" if passages else NO_MATCH
            notes = ("declined: the nearest passages are listed as such",) if passages else ()
            return StageOutput((), notes, decision=Decision(True, reason), passages=passages)
        shown = tuple(Hit(h.chunk_id, h.score, rank, self.name) for rank, h in enumerate(chosen, 1))
        decision = Decision(not passages, "" if passages else NO_MATCH)
        return StageOutput(shown, decision=decision, passages=passages)

    def passage(self, hit: Hit, rank: int, terms: set[str], question: str) -> Passage:
        chunk = self.index.chunk(hit.chunk_id)
        doc = self.index.documents[chunk.doc_id]
        around = self.index.around(chunk.id, self.neighbours) if self.neighbours else [chunk]
        text = doc.text[around[0].start:around[-1].end] if self.neighbours else chunk.text
        start, end, marks = excerpt(text, frozenset(terms), question, self.excerpt_chars, self.index.analyzer)
        where = next((c for c in reversed(around) if c.start - around[0].start <= start), chunk)
        return Passage(chunk.id, doc.id, doc.title, where.locator, text, hit.score, rank,
                       text[start:end], start, marks)


@lru_cache(maxsize=EXCERPTS_KEPT)
def excerpt(text: str, terms: frozenset[str], question: str, chars: int,
            analyze: Callable[[str], list[str]]) -> Excerpt:
    """The window shown of a chunk around its best sentence, and the answer words marked in it."""
    a, b, _ = best_sentence(text, set(terms), analyze)
    start, end = window(text, a, chars)
    marks: tuple[tuple[int, int], ...] = ()
    if not asks_for_a_name(question):  # the run that answers, anywhere in the window shown
        marks = tuple((x - start, y - start) for x, y in answer_words(text, start, end, set(terms), analyze, question))
    return start, end, marks


def answer_of(question: str, selected: StageOutput, trace: Sequence[StageTrace], quote: Quote | None,
              generation: Generation | None = None) -> Answer:
    """The Answer from the answer stage's output: declined, its passages listed as the nearest;
    else the first passage, and one passage from each further document before the rest."""
    decision = selected.decision or Decision(True, NO_MATCH)
    passages = selected.passages or ()
    if decision.declined:
        return Answer(question, None, passages, True, decision.why, tuple(trace), quote, generation)
    first, rest = passages[0], passages[1:]
    rest = tuple(also_found_order(rest, lambda p: p.doc_id, first.doc_id))
    return Answer(question, first, rest, False, "", tuple(trace), quote, generation)


ANSWERS = {"answer": Entry(made, keeps_scores("the first k of the packed chunks, shown as the answer and what "
                                              "else was found"))}
