"""The real command line, run as a user runs it (a subprocess), with its exit codes."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helper import glassrag

# every test here starts glassrag as a separate process (tests/cli_helper.py)
pytestmark = pytest.mark.slow


def test_ingest_then_ask(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    r = glassrag("ingest", corpus, "--index", idx)
    assert r.returncode == 0, r.stderr
    assert "documents  4" in r.stdout.replace("  ", "  ") or "documents" in r.stdout
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx)
    assert r.returncode == 0, r.stderr
    assert "TX-200 Manual, § 2.1 Sensor errors" in r.stdout
    assert "E-4107 means the tilt sensor lost calibration." in r.stdout
    # the order of the passages after the answer is said, as the ask page says it (issue 49, item 7)
    assert "Also found  one passage from each further document first, then the rest" in r.stdout
    for stage in ("analyze", "bm25", "lsa", "answer"):
        assert stage in r.stdout
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--json")
    data = json.loads(r.stdout)
    assert [(t["name"], t["kind"]) for t in data["trace"]] == [
        ("analyze", "analyze"), ("bm25", "retrieve"), ("lsa", "observe"), ("gate", "gate"),
        ("budget", "budget"), ("answer", "select"), ("read", "read")]
    assert data["passage"]["locator"] == "§ 2.1 Sensor errors"


def test_second_ingest_reuses_unchanged_files(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    (corpus / "notes.txt").write_text("Changed notes about the charger.\n")
    (corpus / "new.md").write_text("# New\nA new page.\n")
    r = glassrag("ingest", corpus, "--index", idx)
    lines = {l.split()[0]: l.split()[1] for l in r.stdout.splitlines() if len(l.split()) == 2}
    assert (lines["added"], lines["changed"], lines["unchanged"]) == ("1", "1", "3")


def test_bad_file_is_listed_and_exit_code_says_so(corpus: Path, tmp_path: Path):
    (corpus / "broken.md").write_bytes(b"\xff\xfe\xfa not utf8" * 3 + b"\x00")
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx")
    assert r.returncode == 5
    assert "broken.md" in r.stderr
    r = glassrag("ask", "quiet hours", "--index", tmp_path / "idx")
    assert r.returncode == 0 and "quiet hours" in r.stdout


def test_errors_are_messages_not_tracebacks(corpus: Path, tmp_path: Path):
    r = glassrag("ask", "anything", "--index", tmp_path / "missing")
    assert r.returncode == 3
    assert "does not exist" in r.stderr and "Traceback" not in r.stderr
    assert glassrag("ingest", corpus, "--index", tmp_path / "idx").returncode == 0
    r = glassrag("ask", "the of", "--index", tmp_path / "idx")
    assert r.returncode == 2 and "nothing searchable" in r.stderr
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx2", "--chunker", "magic")
    assert r.returncode == 2 and "chunk.chunker must be one of: fixed, sentence, heading, heading-body, recursive, document" in r.stderr
    assert not (tmp_path / "idx2").exists()


def test_empty_folder_writes_no_index(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    r = glassrag("ingest", tmp_path / "empty", "--index", tmp_path / "idx")
    assert r.returncode == 1 and "no index was written" in r.stderr
    assert not (tmp_path / "idx").exists()


GOLDEN = [
    {"id": "q1", "question": "What does E-4107 mean?", "split": "test", "kind": "identifier",
     "answerable": True, "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors",
                                      "text": "E-4107 means the tilt sensor lost calibration."}],
     "must_contain": ["E-4107"]},
    {"id": "q2", "question": "What is the Lisbon meal allowance?", "split": "test", "kind": "table",
     "answerable": True, "answers": [{"doc": "travel", "locator": "§ Per diem", "text": "Lisbon | EUR 45"}]},
    {"id": "q3", "question": "Is there a gym membership?", "split": "test", "kind": "unanswerable",
     "answerable": False},
]


def test_golden_check_eval_compare_and_trec(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    r = glassrag("golden", "check", golden, "--index", idx)
    assert r.returncode == 0 and "3 questions, all valid" in r.stdout

    r = glassrag("eval", "--index", idx, "--golden", golden, "--out", tmp_path / "a.json",
                 "--trec-run", tmp_path / "a.trec")
    assert r.returncode == 0, r.stderr
    for table in ("the ranking before the gate", "every stage", "by kind", "where the answer was lost"):
        assert table in r.stdout
    run = json.loads((tmp_path / "a.json").read_text())
    assert run["answer"]["metrics"]["hit@1"]["n"] == 2 and run["golden"]["unanswerable"] == 1
    assert run["ranking"]["stage"] == "bm25" and run["answer"]["stage"] == "answer"

    cfg = tmp_path / "fused.toml"
    cfg.write_text('[retrieve]\nretrievers = ["bm25", "lsa"]\nobserve = []\n')
    assert glassrag("eval", "--index", idx, "--golden", golden, "--config", cfg,
                    "--out", tmp_path / "b.json").returncode == 0
    r = glassrag("compare", tmp_path / "a.json", tmp_path / "b.json")
    assert r.returncode == 0 and "McNemar exact" in r.stdout and "p (Holm)" in r.stdout
    assert "answer declined_answerable" in r.stdout and "lower" in r.stdout
    assert "settings that differ" in r.stdout and "retrieve.retrievers" in r.stdout

    assert glassrag("trec", "qrels", "--index", idx, "--golden", golden, "--level", "chunk",
                    "--out", tmp_path / "q.trec").returncode == 0
    r = glassrag("trec", "eval", tmp_path / "a.trec", tmp_path / "q.trec", "--metrics", "hit@5")
    assert r.returncode == 0 and "hit@5" in r.stdout


def test_invalid_golden_set_evaluates_nothing(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    bad = [dict(GOLDEN[0], answers=[{"doc": "manual", "locator": "§ 7 Nowhere"}]),
           {"id": "q9", "question": "?"}]
    golden = tmp_path / "bad.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in bad))
    r = glassrag("eval", "--index", idx, "--golden", golden, "--out", tmp_path / "run.json")
    assert r.returncode == 4
    assert f"{golden}:2: missing field 'answerable'" in r.stderr
    assert not (tmp_path / "run.json").exists()
    golden.write_text(json.dumps(bad[0]) + "\n")
    r = glassrag("golden", "check", golden, "--index", idx)
    assert r.returncode == 4 and "manual has no locator '§ 7 Nowhere'" in r.stderr


def test_compare_refuses_a_run_of_another_version(tmp_path: Path):
    (tmp_path / "old.json").write_text(json.dumps({"format": "glassrag-run", "format_version": 1,
                                                  "glassrag_version": "0.1.0", "questions": [],
                                                  "metrics": {}}))
    r = glassrag("compare", tmp_path / "old.json", tmp_path / "old.json")
    assert r.returncode == 4 and "run format 1" in r.stderr and "re-run glassrag eval" in r.stderr
    (tmp_path / "list.json").write_text("[1, 2]")
    r = glassrag("compare", tmp_path / "list.json", tmp_path / "list.json")
    assert r.returncode == 4 and "one JSON object, not list" in r.stderr and "Traceback" not in r.stderr


def test_rerank_train_calibrate_and_a_declined_answer(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    rows = [dict(q, split="train") for q in GOLDEN] + [
        {"id": "q4", "question": "Which charger fits the scanner?", "split": "train",
         "kind": "unanswerable", "answerable": False}]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in rows))

    r = glassrag("ask", "tilt", "--index", idx, "--config", _toml(tmp_path, '[rerank]\nmethod = "learned"\n'))
    assert r.returncode == 2 and "glassrag rerank-train" in r.stderr

    r = glassrag("rerank-train", "--index", idx, "--golden", golden)
    assert r.returncode == 0, r.stderr
    assert "bm25_ratio" in r.stdout and "(bias)" in r.stdout
    # three train questions: said, with what a logistic regression of 10 features needs
    assert "warning the reranker learned from 4 train questions giving" in " ".join(r.stderr.split())
    assert "needs about 100 (10 per feature" in " ".join(r.stderr.split())
    # four train questions cannot show that it helps, so auto leaves it out, and says one thing to do
    said = " ".join(r.stdout.split())
    assert "cross-validation needs at least 5" in said and "decision: rerank.method = auto does not use" in said
    assert "keep [rerank] method" not in said + r.stderr and "use it with" not in said
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--json",
                 "--config", _toml(tmp_path, '[rerank]\nmethod = "learned"\n'))
    assert r.returncode == 0 and "rerank" in [t["name"] for t in json.loads(r.stdout)["trace"]]

    r = glassrag("calibrate", "--index", idx, "--golden", golden)
    assert r.returncode == 0, r.stderr
    assert "gate signals on the train split" in r.stdout and "top:rerank" not in r.stdout  # auto: not used
    # one unanswerable train question cannot show separation: the gate is told to decline nothing
    assert "cannot tell answerable from unanswerable questions on this corpus (too few" in r.stdout
    warning = " ".join(r.stderr.split())
    # the unanswerable ones: the golden set's one and the bundled off-topic train half that matched
    assert re.search(r"warning calibrated on 4 train questions \(2 answerable with their answer found, \d+ "
                     r"unanswerable\)", warning) and "needs at least 5 of each" in warning
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--json")
    gate = next(t for t in json.loads(r.stdout)["trace"] if t["name"] == "gate")
    assert gate["notes"][0].startswith("passed: declines nothing") and "too few train questions" in gate["notes"][0]
    r = glassrag("ask", "Is there a gym membership?", "--index", idx, "--json")
    data = json.loads(r.stdout)
    assert data["declined"] and data["passage"] is None


def test_calibrate_without_unanswerable_questions_saves_nothing(corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    before = (idx / "CURRENT").read_text()
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(dict(q, split="train")) + "\n" for q in GOLDEN[:2]))
    golden_only = _toml(tmp_path, "[gate]\nofftopic = false\n")  # without the bundled off-topic questions
    r = glassrag("calibrate", "--index", idx, "--golden", golden, "--config", golden_only)
    assert r.returncode == 2 and "threshold cannot be calibrated" in r.stderr
    assert (idx / "CURRENT").read_text() == before


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / f"c{abs(hash(text))}.toml"
    path.write_text(text)
    return path


def test_trec_qrels_default_to_the_level_of_the_run_and_a_mismatch_is_said(corpus: Path, tmp_path: Path):
    """The qrels defaulted to documents while eval --trec-run writes chunks for a chunked
    index, so trec eval printed 0.0000 without a word."""
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(q) + "\n" for q in GOLDEN))
    assert glassrag("eval", "--index", idx, "--golden", golden, "--trec-run", tmp_path / "a.trec").returncode == 0
    r = glassrag("trec", "qrels", "--index", idx, "--golden", golden, "--out", tmp_path / "q.trec")
    assert r.returncode == 0 and "qrels (chunk level" in r.stdout
    r = glassrag("trec", "eval", tmp_path / "a.trec", tmp_path / "q.trec", "--metrics", "hit@5")
    assert r.returncode == 0 and "warning" not in r.stderr and "0.0000" not in r.stdout
    assert glassrag("trec", "qrels", "--index", idx, "--golden", golden, "--level", "doc",
                    "--out", tmp_path / "d.trec").returncode == 0
    r = glassrag("trec", "eval", tmp_path / "a.trec", tmp_path / "d.trec", "--metrics", "hit@5")
    assert r.returncode == 0
    assert "no id ranked in" in r.stderr and "different levels (doc and chunk)" in " ".join(r.stderr.split())


def test_help_speaks_to_users_and_every_option_has_help():
    from glassrag.cli import build_parser

    r = glassrag("--help")
    assert r.returncode == 0
    assert "The only place that turns errors" not in r.stdout and "Transparent retrieval" in r.stdout
    missing = []

    def walk(parser, path):
        for action in parser._actions:
            if action.help is None and action.dest != "help":
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
            choices = getattr(action, "choices", None)
            for name, sub in (choices.items() if isinstance(choices, dict) else ()):
                if hasattr(sub, "_actions"):
                    walk(sub, f"{path} {name}")

    walk(build_parser(), "glassrag")
    assert missing == []


def test_python_dash_m_glassrag_is_the_command(corpus: Path, tmp_path: Path):
    """`python -m glassrag` answers like `glassrag`, exit codes included."""
    r = subprocess.run([sys.executable, "-m", "glassrag", "--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("glassrag "), r.stderr
    r = subprocess.run([sys.executable, "-m", "glassrag", "ask", "anything", "--index", str(tmp_path / "none")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "error" in r.stderr, (r.returncode, r.stderr)
