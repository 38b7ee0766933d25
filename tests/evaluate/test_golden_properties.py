"""Properties of the golden parser over generated lines: any JSON gives a question or a
list of reasons, never an exception; any file gives questions or one GoldenError; a valid
line reads back what it says."""

from __future__ import annotations

import json
from pathlib import Path
from tempfile import TemporaryDirectory

from hypothesis import given
from hypothesis import strategies as st

from glassrag.errors import GoldenError
from glassrag.evaluate.golden import KINDS, UNANSWERABLE_KINDS, SPLITS, load_golden, parse_json, parse_line

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10)
FIELDS = st.sampled_from(["id", "question", "answerable", "split", "kind", "answers", "must_contain"])
LINES = st.dictionaries(FIELDS, JSON, max_size=7) | JSON

TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20).filter(str.strip)


@st.composite
def valid_lines(draw) -> dict:
    answerable = draw(st.booleans())
    line = {"id": draw(TEXT | st.integers()), "question": draw(TEXT), "answerable": answerable,
            "split": draw(st.sampled_from(SPLITS))}
    if answerable:
        docs = draw(st.lists(TEXT, min_size=2, max_size=3, unique=True))
        line["answers"] = [{"doc": d, "locator": draw(st.text(max_size=10)), "text": ""} for d in docs]
        line["kind"] = draw(st.sampled_from([k for k in KINDS if k not in UNANSWERABLE_KINDS]))
    else:
        line["kind"] = draw(st.sampled_from([*UNANSWERABLE_KINDS, ""]))
    return line


@given(LINES)
def test_any_json_line_is_a_question_or_reasons(data):
    question, problems = parse_line(data, 1)
    assert (question is None) == bool(problems)
    assert all(isinstance(p, str) and p for p in problems)


@given(valid_lines())
def test_a_valid_line_reads_back_what_it_says(line):
    question, problems = parse_line(json.loads(json.dumps(line)), 7)
    assert problems == [] and question is not None
    assert (question.id, question.question, question.answerable, question.split, question.kind, question.line) \
        == (str(line["id"]), line["question"], line["answerable"], line["split"], line["kind"], 7)
    assert [a.doc for a in question.answers] == [a["doc"] for a in line.get("answers", [])]


@given(st.lists(st.text(max_size=30) | LINES.map(json.dumps), max_size=5))
def test_any_file_gives_questions_or_one_golden_error(lines):
    with TemporaryDirectory() as folder:
        path = Path(folder) / "g.jsonl"
        path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
        try:
            questions = load_golden(path)
        except GoldenError as e:
            assert e.problems and all(isinstance(n, int) and reason for n, reason in e.problems)
            assert [n for n, _ in e.problems] == sorted(n for n, _ in e.problems)
        else:
            assert questions and len({q.id for q in questions}) == len(questions)


@given(st.text(max_size=40))
def test_any_text_is_json_or_a_reason(raw):
    value, reason = parse_json(raw)
    assert (reason == "") or value is None
