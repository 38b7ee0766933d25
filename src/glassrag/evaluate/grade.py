"""Scores of a generated answer without a judge: each is a rule you can read, applied to the
answer, the passages the generator was given and the golden question. No second model
decides anything, so every count can be checked by hand.

| score | per answer | better |
|---|---|---|
| `foreign_citations` | cites a document or locator that was not among the passages given | lower |
| `leaked_tags` | a numbered label (`[Document 4]`, `[2]`, `Passage 3`), a chat-template token or prompt scaffolding (`Question:`) in the answer | lower |
| `cited` | at least one citation names a passage given | higher |
| `refused_unanswerable` | gave the prompt's refusal on a question the documents cannot answer | higher |
| `refused_answerable` | gave it on a question they answer | lower |
| `hedged` | refusal-like wording that is not the stated form ("I don't know"): neither an answer nor the refusal | lower |
| `wording_share` | of the answer's content bigrams (analyzer tokens, citations removed), the share found in the passages given | higher |
| `contains_answer` | every must-contain string of the golden question is in the answer (an upper check, answerable only) | higher |

A citation is the text inside [...] or (...). It names a passage when it contains the
passage's label or its document's title; then any locator in it (page, slide, sheet, §,
lines) must be one of that passage's locators (its own or an attached neighbour's). It is
foreign when it names a title or a numbered label that was not given, a title-like span
with a locator for a document not given, or a given document with a locator not given.
Brackets that name nothing (`(12 V)`) are not citations.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from glassrag.evaluate.golden import normalize_space
from glassrag.generate.prompt import REFUSAL, Given

# the innermost [...] or (...): "(see [Document 3])" yields "Document 3"
BRACKETED = re.compile(r"\[([^\[\]()]{1,200})\]|\(([^()\[\]]{1,200})\)")
# a label's number has at most 3 digits, so a date, "(2025-02-11)", is no label
NUMBERED = re.compile(r"^(?:(?:document|doc|passage|source|context|reference|ref)\.?\s*#?\s*)?"
                      r"(\d{1,3})(?:\s*[,;–-]\s*\d{1,3})*$", re.I)
# a bare range in round brackets is a quantity, "(3-5) days", not labels 3 to 5
ROUND_RANGE = re.compile(r"^\s*\d+\s*[–-]\s*\d+\s*$")
BARE_NUMBERED = re.compile(r"\b(?:document|passage|source|context)\s+#?\d+\b", re.I)
SCAFFOLD = re.compile(r"<\|[a-z_]+\|>|</?s>|^\s*(?:question|passage|context|answer|system|user|assistant)\s*:",
                      re.I | re.M)
LOCATOR = re.compile(r"\b(?:page|p\.|pp\.|slide|sheet|lines?)\s*\S+|§\s*\S+", re.I)
HEDGES = re.compile(r"\b(?:i (?:do not|don't) know|cannot (?:find|answer|determine)|can't (?:find|answer)|"
                    r"no information|not (?:mentioned|provided|specified|stated|included|available)|"
                    r"(?:do|does) not (?:contain|mention|say|provide|specify|include)|unable to (?:find|answer))",
                    re.I)


def _norm(text: str) -> str:
    return normalize_space(text).casefold()


def citations(text: str) -> list[str]:
    """The text inside every innermost [...] and (...) of the answer, but for a bare number
    range in round brackets ("(3-5)": a quantity; "[3-5]" still cites labels 3 to 5)."""
    return [m.group(1) or m.group(2) for m in BRACKETED.finditer(text)
            if m.group(1) is not None or not ROUND_RANGE.match(m.group(2))]


def judge_citation(span: str, given: Sequence[Given], titles: Sequence[str]) -> str:
    """'given', 'foreign' or 'none' (not a citation) for one bracketed span."""
    s = _norm(span)
    number = NUMBERED.match(s)
    if number:
        labels = {_norm(g.label) for g in given}
        if any(_norm(label).startswith(("document", "passage")) for label in labels):
            n = int(number.group(1))
            return "given" if 1 <= n <= len(given) else "foreign"
        return "foreign" if re.search(r"[a-z]", s) else "none"  # "(2)" names nothing; "Doc 2" does
    for g in given:
        if _norm(g.label) == s:
            return "given"
    named = [g for g in given if _norm(g.title) in s]
    if named:
        rest = s
        for g in named:
            rest = rest.replace(_norm(g.title), " ")
        rest = rest.strip(" ,;:-–—")
        if not rest or not LOCATOR.search(rest):
            return "given"
        locators = [_norm(loc) for g in named for loc in g.locators if loc]
        ok = any(rest in loc or loc in rest for loc in locators)
        return "given" if ok else "foreign"
    if any(_norm(t) in s for t in titles if t):
        return "foreign"  # a document of the index that was not given
    if LOCATOR.search(s) and re.search(r"[a-z]{3}", LOCATOR.sub(" ", s)):
        return "foreign"  # a title with a locator, of no document given
    return "none"


def leaked(text: str) -> list[str]:
    """Numbered labels, chat-template tokens and prompt scaffolding found in the answer."""
    found = [m.group(0) for m in BRACKETED.finditer(text) if NUMBERED.match(_norm(m.group(1) or m.group(2)))
             and (m.group(1) is not None or not ROUND_RANGE.match(m.group(2)))]
    found += BARE_NUMBERED.findall(BRACKETED.sub(" ", text))
    found += [m.group(0).strip() for m in SCAFFOLD.finditer(text)]
    return found


def refusal(text: str) -> str:
    """'refused' (the prompt's stated form), 'hedged' (refusal-like, not that form) or 'answered'."""
    form = _norm(REFUSAL).rstrip(".")
    if form in _norm(text):
        return "refused"
    return "hedged" if HEDGES.search(text) else "answered"


def bigrams(tokens: Sequence[str]) -> set[tuple[str, ...]]:
    if len(tokens) < 2:
        return {(t,) for t in tokens}
    return set(zip(tokens, tokens[1:]))


def wording_share(text: str, given: Sequence[Given], analyze: Callable[[str], list[str]]) -> float | None:
    """Share of the answer's content bigrams (citations removed) found in the given text;
    None when the answer has no content word."""
    own = bigrams(analyze(BRACKETED.sub(" ", text)))
    if not own:
        return None
    source = analyze("\n".join(g.text for g in given))
    grams = bigrams(source) if len(next(iter(own))) == 2 else {(t,) for t in source}
    return len(own & grams) / len(own)


def contains_answer(text: str, must_contain: Sequence[str]) -> bool | None:
    if not must_contain:
        return None
    have = _norm(text)
    return all(_norm(m) in have for m in must_contain)


def grade(text: str, given: Sequence[Given], titles: Sequence[str], analyze: Callable[[str], list[str]],
          answerable: bool | None = None, must_contain: Sequence[str] = ()) -> dict[str, Any]:
    """Every score of one answer (None where a score does not apply), with what it found."""
    verdicts = [(span, judge_citation(span, given, titles)) for span in citations(text)]
    foreign = [span for span, v in verdicts if v == "foreign"]
    tags = leaked(text)
    said = refusal(text)
    out: dict[str, Any] = {
        "foreign_citations": float(bool(foreign)),
        "leaked_tags": float(bool(tags)),
        "cited": float(any(v == "given" for _, v in verdicts)),
        "hedged": float(said == "hedged"),
        "wording_share": wording_share(text, given, analyze) if said == "answered" else None,
        "refusal": said,
        "found": {"foreign": foreign, "tags": tags,
                  "citations": [span for span, v in verdicts if v != "none"]},
    }
    if answerable is not None:
        out["refused_unanswerable" if not answerable else "refused_answerable"] = float(said == "refused")
        if answerable:
            got = contains_answer(text, must_contain)
            out["contains_answer"] = None if got is None else float(got)
    return out


# the per-answer scores that are rates or means (the rest of grade()'s output explains them)
SCORES = ("foreign_citations", "leaked_tags", "cited", "refused_unanswerable", "refused_answerable",
          "hedged", "wording_share", "contains_answer")# which way each is better: schema.LOWER_IS_BETTER
