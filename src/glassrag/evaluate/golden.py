"""Golden sets: labelled questions, loaded and validated line by line.

The JSONL format is documented in docs/golden-format.md. `load_golden` checks the
shape of every line; `check_against` checks every label against an index (documents,
locators, verbatim spans, must_contain words). Both report every problem with its line
number and never stop at the first.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from glassrag.errors import GoldenError

KINDS = ("lookup", "paraphrase", "identifier", "named-term", "multi-doc", "table",
         "outdated", "unanswerable", "off-topic")
# the kinds of a question the documents cannot answer: on their topic but absent from them
# (unanswerable), or about something they are not about at all (off-topic)
UNANSWERABLE_KINDS = ("unanswerable", "off-topic")
SPLITS = ("train", "test")
REQUIRED = ("id", "question", "answerable")


@dataclass(frozen=True)
class Span:
    """One place that answers a question: a document, optionally a locator and verbatim text."""

    doc: str
    locator: str = ""
    text: str = ""
    grade: int = 1


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answerable: bool
    split: str = "test"
    kind: str = ""
    answers: tuple[Span, ...] = ()
    must_contain: tuple[str, ...] = ()
    line: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def answer_docs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.doc for a in self.answers))


def normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


HEADING_MARKS = re.compile(r"^ {0,3}#{1,6}[ \t]+", re.MULTILINE)


def answer_forms(text: str) -> tuple[str, ...]:
    """An answer text as an index may hold it, white space normalised: as written, then without
    the Markdown markup the Markdown loader removes (heading marks, `code`, **strong**, _em_,
    [text](url): `glassrag.ingest.markdown.plain_inline`), so an answer copied from a Markdown
    source matches the index's text. As written comes first: a PDF that prints `**` still matches."""
    from glassrag.ingest.markdown import plain_inline  # only labels with text need it

    raw = normalize_space(text)
    plain = normalize_space(plain_inline(HEADING_MARKS.sub("", text)))
    return (raw,) if plain == raw else (raw, plain)


def find_answer(text: str, where: str) -> str:
    """The form of an answer text (`answer_forms`) that `where` holds, or "" when none."""
    where = normalize_space(where)
    return next((form for form in answer_forms(text) if form in where), "")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text_problems(data: Any) -> list[str]:
    """Lone surrogates anywhere in a line (not Unicode text: a run could not be saved or
    printed) and control characters in ids and questions. Walks without recursion."""
    problems: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and (m := _SURROGATE.search(item)):
            problems.append(f"a lone surrogate \\u{ord(m.group()):04x} (not valid Unicode) "
                            f"in {item[:40].encode('utf-8', 'backslashreplace').decode()!r}")
            break
    if isinstance(data, dict):
        for name in ("id", "question"):
            value = data.get(name)
            if isinstance(value, str) and (m := _CONTROL.search(value)):
                problems.append(f"{name!r} holds the control character U+{ord(m.group()):04X}")
    return problems


LINES = re.compile(r"^lines?\s+(\d+)(?:\s*-\s*(\d+))?$")


def line_range(locator: str) -> tuple[int, int] | None:
    """`lines 3-7` → (3, 7), `line 4` → (4, 4); None for any other locator."""
    m = LINES.match(locator.strip())
    if not m:
        return None
    first = int(m.group(1))
    return first, int(m.group(2) or first)


def locator_matches(label: str, shown: str) -> bool:
    """Whether a shown passage's locator cites a labelled one: the same text, or, for plain
    text, line ranges that overlap (`lines 1-7` shown cites `lines 3-5` labelled)."""
    if label == shown:
        return True
    a, b = line_range(label), line_range(shown)
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def parse_line(data: Any, line: int) -> tuple[Question | None, list[str]]:
    """One golden line to a Question, or every reason it is not one."""
    if not isinstance(data, dict):
        return None, ["a line must be a JSON object"]
    problems = [f"missing field {f!r}" for f in REQUIRED if f not in data]
    problems.extend(_text_problems(data))
    qid = data.get("id")
    if "id" in data and not ((isinstance(qid, str) and qid.strip())
                             or (isinstance(qid, int) and not isinstance(qid, bool))):
        problems.append(f"'id' must be a non-empty string or a whole number, not {json.dumps(qid)[:40]}")
    if "question" in data and (not isinstance(data["question"], str) or not data["question"].strip()):
        problems.append("'question' must be a non-empty string")
    if "answerable" in data and not isinstance(data["answerable"], bool):
        problems.append("'answerable' must be true or false")
    split = data.get("split", "test")
    if not isinstance(split, str) or split not in SPLITS:
        problems.append(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    kind = data.get("kind", "")
    if not isinstance(kind, str):
        problems.append("'kind' must be a string")
        kind = ""
    elif kind and kind not in KINDS:
        problems.append(f"unknown kind {kind!r}; use one of {', '.join(KINDS)}")
    spans, span_problems = _spans(data)
    problems.extend(span_problems)
    must = data.get("must_contain", [])
    if not isinstance(must, list) or not all(isinstance(w, str) for w in must):
        problems.append("'must_contain' must be a list of strings")
        must = []
    if data.get("answerable") is True and not spans:
        problems.append("an answerable question needs at least one answer")
    if data.get("answerable") is False and spans:
        problems.append("an unanswerable question must have no answers")
    if kind in UNANSWERABLE_KINDS and data.get("answerable") is not False:
        problems.append(f"kind {kind!r} needs answerable: false")
    if kind == "multi-doc" and len({s.doc for s in spans}) < 2:
        problems.append("kind 'multi-doc' needs answers from two or more documents")
    for w in must:
        if spans and all(s.text for s in spans) and not any(
                w.lower() in s.text.lower() for s in spans):
            problems.append(f"must_contain {w!r} occurs in none of the answer texts")
    if problems:
        return None, problems
    known = {"id", "question", "answerable", "split", "kind", "answers", "must_contain"}
    return Question(
        id=str(data["id"]), question=data["question"], answerable=data["answerable"],
        split=split, kind=kind, answers=tuple(spans), must_contain=tuple(must), line=line,
        extra={k: v for k, v in data.items() if k not in known},
    ), []


def _spans(data: dict[str, Any]) -> tuple[list[Span], list[str]]:
    """The answers of a line that name a document, and the problems of the others."""
    answers_raw = data.get("answers", [])
    if not isinstance(answers_raw, list):
        return [], ["'answers' must be a list"]
    spans, problems = [], []
    for i, a in enumerate(answers_raw):
        if not isinstance(a, dict) or not isinstance(a.get("doc"), str) or not a["doc"]:
            problems.append(f"answers[{i}] needs a 'doc' (a document id)")
            continue
        spans.append(Span(a["doc"], str(a.get("locator", "")), str(a.get("text", ""))))
    return spans, problems


def _draft(data: Any, line: int) -> Question | None:
    """What can be read of a line with problems, so that its answers are checked against the
    index in the same pass: every problem is reported at once, not one kind per run."""
    if not isinstance(data, dict):
        return None
    spans, _ = _spans(data)
    qid = data.get("id")
    name = str(qid) if isinstance(qid, (str, int)) and not isinstance(qid, bool) and str(qid).strip() \
        else f"line {line}"
    return Question(id=name, question="", answerable=True, answers=tuple(spans), line=line) if spans else None


def read_lines(path: Path) -> list[str]:
    """The lines of a JSONL file (UTF-8, a byte-order mark allowed), or GoldenError. Lines
    end at \\n only: U+2028 inside a JSON string is text, not a line break."""
    if path.is_dir():
        raise GoldenError(str(path), [(0, "is a folder, not a golden JSONL file (a BEIR folder "
                                          "needs queries.jsonl and qrels/)")])
    try:
        return path.read_bytes().decode("utf-8-sig").split("\n")
    except FileNotFoundError:
        raise GoldenError(str(path), [(0, "no such file")]) from None
    except OSError as e:
        raise GoldenError(str(path), [(0, f"cannot be read: {e.strerror}")]) from None
    except UnicodeDecodeError as e:
        raise GoldenError(str(path), [(0, f"not UTF-8 ({e.reason} at byte {e.start})")]) from None


def parse_json(raw: str) -> tuple[Any, str]:
    """A line's JSON value, or the reason it has none (never an exception: a 5,000-digit
    number and 100,000 nested brackets are reasons too)."""
    try:
        return json.loads(raw), ""
    except json.JSONDecodeError as e:
        return None, f"not valid JSON: {e.msg} at column {e.colno}"
    except ValueError as e:  # an integer of more digits than int() converts
        return None, f"not usable JSON: {e}"
    except RecursionError:
        return None, "not usable JSON: nested too deeply"


def load_golden(path: Path, split: str = "all",
                documents: Mapping[str, Any] | None = None) -> list[Question]:
    """Every question of a golden JSONL file, or one GoldenError listing every problem of
    every line: its shape and, given an index's `documents`, its labels (check_against)."""
    if split not in (*SPLITS, "all"):
        raise GoldenError(str(path), [(0, f"unknown split {split!r}; use train, test or all")])
    questions: list[Question] = []
    drafts: list[Question] = []  # lines with problems, whose answers are checked all the same
    problems: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(read_lines(path), 1):
        if not raw.strip():
            continue
        data, bad_json = parse_json(raw)
        if bad_json:
            problems.append((n, bad_json))
            continue
        q, reasons = parse_line(data, n)
        problems.extend((n, r) for r in reasons)
        if q is None and (draft := _draft(data, n)) is not None:
            drafts.append(draft)
        qid = data.get("id") if isinstance(data, dict) else None
        key = str(qid) if isinstance(qid, (str, int)) and not isinstance(qid, bool) else None
        if key is not None and key in seen:
            problems.append((n, f"id {key!r} already used on line {seen[key]}"))
            drafts.extend([q] if q is not None else [])
            continue
        if key is not None:
            seen[key] = n
        if q is not None:
            questions.append(q)
    if not questions and not problems:
        problems.append((0, "no questions in the file"))
    if documents is not None:
        problems.extend(check_against(questions + drafts, documents))
    if problems:
        raise GoldenError(str(path), sorted(problems, key=lambda p: p[0]))
    return [q for q in questions if split == "all" or q.split == split]


def check_against(questions: list[Question], documents: Mapping[str, Any]) -> list[tuple[int, str]]:
    """Problems of labels against an index's documents: unknown document, unknown locator,
    answer text that is not a verbatim span of its section (white space normalised, Markdown
    markup the index removed ignored: `answer_forms`); one found under another locator names it."""
    problems: list[tuple[int, str]] = []
    for q in questions:
        for a in q.answers:
            doc = documents.get(a.doc)
            if doc is None:
                problems.append((q.line, f"{q.id}: document {a.doc!r} is not in the index"
                                         f"{did_you_mean(a.doc, documents)}"))
                continue
            where = doc.text
            lines = line_range(a.locator) if getattr(doc, "format", "") == "text" else None
            if lines is not None:
                all_lines = doc.text.split("\n")
                first, last = lines
                if not 1 <= first <= last <= len(all_lines):
                    problems.append((q.line, f"{q.id}: {a.doc} has lines 1-{len(all_lines)}, "
                                             f"not {a.locator!r}"))
                    continue
                where = "\n".join(all_lines[first - 1:last])
            elif a.locator:
                sections = [s for s in doc.sections if s.locator == a.locator]
                if not sections:
                    problems.append((q.line, f"{q.id}: {a.doc} has no locator {a.locator!r}"
                                             f"{did_you_mean(a.locator, [s.locator for s in doc.sections])}"))
                    continue
                where = "\n".join(doc.section_text(s) for s in sections)
            if a.text and not find_answer(a.text, where):
                place = f"{a.doc} {a.locator}".strip()
                elsewhere = _found_in(a.text, doc) if a.locator and lines is None else []
                hint = f" (it is in {' and '.join(repr(s) for s in elsewhere)})" if elsewhere else ""
                problems.append((q.line, f"{q.id}: answer text is not verbatim in {place}{hint}: "
                                         f"{a.text[:60]!r}"))
    return problems


def _found_in(text: str, doc: Any) -> list[str]:
    """The locators of a document whose text holds an answer text, at most three: where a
    label's text is when it is not under the locator it names."""
    by_locator: dict[str, list[str]] = {}
    for s in doc.sections:
        by_locator.setdefault(s.locator, []).append(doc.section_text(s))
    return [loc for loc, texts in by_locator.items() if find_answer(text, "\n".join(texts))][:3]


def did_you_mean(wrong: str, valid: Iterable[str], n: int = 3) -> str:
    """`; did you mean 'a' or 'b'?` naming the closest valid values (difflib's ratio >= 0.6,
    case ignored; the id without its extension first, for `manual.md` against `manual`), or
    nothing when none is close (`glassrag documents` lists them all: GoldenError's hint)."""
    valid = list(dict.fromkeys(valid))
    by_lower = {v.lower(): v for v in valid}
    exact = [by_lower[w] for w in (wrong.lower(), wrong.lower().rsplit(".", 1)[0]) if w in by_lower]
    close = difflib.get_close_matches(wrong.lower(), list(by_lower), n=n)
    names = list(dict.fromkeys([*exact, *(by_lower[c] for c in close)]))[:n]
    if not names:
        return ""
    return "; did you mean " + " or ".join(repr(x) for x in names) + "?"
