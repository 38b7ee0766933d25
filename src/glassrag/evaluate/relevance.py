"""Which chunks answer a question, by the strongest label it has.

Each answer of a question is one *unit*. A chunk satisfies a unit when
1. the unit has a verbatim text: the chunk, from the unit's document, contains the text
   whole (white space normalised; as written or, when no chunk holds that, without the
   Markdown markup the index removed: `answer_forms`);
2. otherwise: the chunk comes from the unit's document and, when given, its locator, and
   contains every `must_contain` word of the question (case-insensitive) when it has any;
3. (BEIR) the unit is a judged document: any chunk of that document, with the grade.

A ranked list of chunks becomes a ranked list of units (the first chunk that satisfies a
unit stands for it; later ones count as not relevant), so recall, MRR and nDCG count each
answer once however many overlapping chunks hold it. With one chunk per document (BEIR)
this is exactly trec_eval's document-level evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from glassrag.evaluate.golden import Question, answer_forms, normalize_space
from glassrag.schema import Chunk


@dataclass(frozen=True)
class Judgement:
    """One question's labels resolved against one index."""

    units: dict[str, int]  # unit id -> grade
    unit_docs: dict[str, str]  # unit id -> document id
    satisfies: dict[str, tuple[str, ...]]  # chunk id -> units it satisfies
    texts: dict[str, str]  # unit id -> normalised answer text ("" when none)
    intact: bool  # every text-labelled unit is held whole by some chunk
    excluded: frozenset[str] = frozenset()  # chunks never counted (BEIR: the query's own document)

    def ranked_units(self, chunk_ids: Sequence[str]) -> list[str]:
        """Chunk ids best first → unit ids (first satisfying chunk) or `~chunk` (not relevant);
        excluded chunks are dropped from the ranking."""
        seen: set[str] = set()
        out = []
        excluded, satisfies = self.excluded, self.satisfies
        for cid in chunk_ids:
            if cid in excluded:
                continue
            unit = None
            for u in satisfies.get(cid, ()):  # the first unit this chunk satisfies not yet seen
                if u not in seen:
                    unit = u
                    break
            if unit is None:
                out.append("~" + cid)
            else:
                seen.add(unit)
                out.append(unit)
        return out

    def relevant_chunks(self) -> set[str]:
        return set(self.satisfies)


class Judge:
    """Resolves questions against an index's chunks (normalised texts are computed once)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.by_doc: dict[str, list[Chunk]] = {}
        for c in chunks:
            self.by_doc.setdefault(c.doc_id, []).append(c)
        self._norm: dict[str, str] = {}

    def norm(self, chunk: Chunk) -> str:
        text = self._norm.get(chunk.id)
        if text is None:
            text = self._norm[chunk.id] = normalize_space(chunk.text)
        return text

    def judge(self, question: Question) -> Judgement:
        units: dict[str, int] = {}
        unit_docs: dict[str, str] = {}
        texts: dict[str, str] = {}
        satisfies: dict[str, list[str]] = {}
        intact = True
        must = [m.lower() for m in question.must_contain]
        for i, answer in enumerate(question.answers):
            unit = f"a{i}:{answer.doc}"
            units[unit] = answer.grade
            unit_docs[unit] = answer.doc
            doc_chunks = self.by_doc.get(answer.doc, ())
            if answer.text:
                forms = answer_forms(answer.text)
                # the first form some chunk holds whole (as written, then without Markdown markup)
                wanted = next((f for f in forms if any(f in self.norm(c) for c in doc_chunks)), forms[0])
            else:
                wanted = ""
            texts[unit] = wanted
            found = False
            for c in doc_chunks:
                if wanted:
                    ok = wanted in self.norm(c)
                else:
                    ok = (not answer.locator or c.locator == answer.locator) and (
                        not must or all(m in self.norm(c).lower() for m in must))
                if ok:
                    satisfies.setdefault(c.id, []).append(unit)
                    found = True
            if wanted and not found:
                intact = False
        excluded = frozenset(c.id for c in self.by_doc.get(question.id, ())) \
            if question.extra.get("exclude_self") else frozenset()
        return Judgement(units, unit_docs, {k: tuple(v) for k, v in satisfies.items()}, texts,
                         intact, excluded)


def visible(judgement: Judgement, question: Question, shown_texts: Sequence[str]) -> bool | None:
    """The answer can be read in what was shown: some shown text holds an answer's text
    whole, or (no text labels) all `must_contain` words. None when the question has
    neither label (BEIR), so there is nothing to check."""
    shown = [normalize_space(t).lower() for t in shown_texts]
    wanted = [t.lower() for t in judgement.texts.values() if t]
    if wanted:
        return any(w in s for w in wanted for s in shown)
    if question.must_contain:
        return any(all(m.lower() in s for m in question.must_contain) for s in shown)
    return None


def quote_correct(judgement: Judgement, question: Question, quote: str) -> bool:
    """The reader's sentence answers: it lies inside an answer text, holds one whole, or
    (no text labels) contains every `must_contain` word."""
    q = normalize_space(quote).lower()
    if not q:
        return False
    wanted = [t.lower() for t in judgement.texts.values() if t]
    if wanted:
        return any(q in w or w in q for w in wanted)
    if question.must_contain:
        return all(m.lower() in q for m in question.must_contain)
    return False
