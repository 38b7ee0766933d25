"""`lines A-B` locators for plain text, end to end: ingest, `golden check`, locator_hit."""

import json
from pathlib import Path

from glassrag.config import Config
from glassrag.evaluate.golden import check_against, line_range, load_golden, locator_matches
from glassrag.evaluate.runs import evaluate
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

NOTES = ("Site notes\n\nThe gate code is 4417.\nVisitors sign in at the cabin.\n"
         "Deliveries arrive on Tuesdays before noon.\n\nThe crane is inspected every March.\n")


def test_line_ranges_parse_and_overlap():
    assert line_range("lines 3-7") == (3, 7) and line_range("line 4") == (4, 4)
    assert line_range("page 3") is None and line_range("lines") is None
    assert locator_matches("lines 3-5", "lines 1-7")
    assert locator_matches("lines 3-5", "line 5")
    assert not locator_matches("lines 3-5", "lines 6-9")
    assert not locator_matches("lines 3-5", "page 3")
    assert locator_matches("page 3", "page 3") and not locator_matches("page 3", "page 4")


def test_lines_locator_checks_and_hits(tmp_path: Path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "site.txt").write_text(NOTES)
    config = Config().with_overrides(gate={"enabled": False})
    index, report = build_index([tmp_path / "docs"], config)
    assert not report.failed
    rows = [
        {"id": "q1", "question": "What is the gate code?", "answerable": True,
         "answers": [{"doc": "site", "locator": "lines 3-4", "text": "The gate code is 4417."}]},
        {"id": "q2", "question": "When is the crane inspected?", "answerable": True,
         "answers": [{"doc": "site", "locator": "lines 3-4",
                      "text": "The crane is inspected every March."}]},
        {"id": "q3", "question": "Where do visitors sign in?", "answerable": True,
         "answers": [{"doc": "site", "locator": "lines 9-12", "text": "sign in at the cabin"}]},
    ]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in rows))
    questions = load_golden(golden)
    problems = check_against(questions, index.documents)
    assert problems == [
        (2, "q2: answer text is not verbatim in site lines 3-4: 'The crane is inspected every March.'"),
        (3, "q3: site has lines 1-7, not 'lines 9-12'")]
    run = evaluate(Pipeline(index, config), questions[:1])
    record = run.questions[0]
    assert record.locator_hit is True
    assert run.answer.metrics["locator_hit@5"]["value"] == 1.0
