"""What a careless user types or hands over gets a message and a documented exit code
(2 a bad setting, 3 a damaged index, 4 a bad golden set), never a traceback (issue 13.4)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.cli_helper import glassrag


def no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr, r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-3", "1e400"])
def test_max_mb_must_be_a_finite_positive_number(corpus: Path, tmp_path: Path, value: str):
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx", f"--max-mb={value}")
    assert r.returncode == 2
    assert f"argument --max-mb: '{value}' must be a finite number > 0" in r.stderr
    no_traceback(r)
    assert not (tmp_path / "idx").exists()


@pytest.mark.slow
def test_lsa_dim_below_one_is_a_setting_error(corpus: Path, tmp_path: Path):
    """`[lsa] dim = -1` raised IndexError inside the SVD."""
    config = tmp_path / "c.toml"
    config.write_text("[lsa]\ndim = -1\n")
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx", "--config", config)
    assert r.returncode == 2
    assert f"lsa.dim = -1 in {config}: must be an integer from 1 to 100_000" in r.stderr
    no_traceback(r)


# golden sets ---------------------------------------------------------------------------

GOOD = {"id": "q1", "question": "What does E-4107 mean?", "answerable": True,
        "answers": [{"doc": "manual", "locator": "§ 2.1 Sensor errors",
                     "text": "E-4107 means the tilt sensor lost calibration."}]}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import write_corpus

    root = tmp_path_factory.mktemp("bad-input")
    idx = root / "idx"
    r = glassrag("ingest", write_corpus(root / "docs"), "--index", idx)
    assert r.returncode == 0, r.stderr
    return idx


def golden_file(tmp_path: Path, *lines: str | bytes) -> Path:
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n"
                              for line in lines))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("line, reason", [
    ('{"id": ' + "7" * 5000 + ', "question": "x", "answerable": false}', "not usable JSON: Exceeds the limit"),
    ("[" * 100_000 + "]" * 100_000, "not usable JSON: nested too deeply"),
    ('{"id": null, "question": "x", "answerable": false}', "'id' must be a non-empty string or a whole number, not null"),
    ('{"id": "q", "question": "caf\\ud800", "answerable": false}', "a lone surrogate \\ud800 (not valid Unicode)"),
], ids=["id-5000-digits", "nested-100k", "id-null", "lone-surrogate"])  # short ids: pytest puts
# the id into PYTEST_CURRENT_TEST, and a 200 kB one makes subprocesses fail with E2BIG (issue 27)
def test_a_bad_golden_line_is_a_golden_error(tmp_path: Path, line: str, reason: str):
    golden = golden_file(tmp_path, json.dumps(GOOD), line)
    r = glassrag("golden", "check", golden)
    assert r.returncode == 4, r.stderr
    assert f"{golden}:2: {reason}" in r.stderr
    no_traceback(r)


@pytest.mark.slow
def test_a_lone_surrogate_stops_eval_before_it_runs(built: Path, tmp_path: Path):
    """It passed `golden check` and then crashed `eval --save` while printing, losing the run."""
    golden = golden_file(tmp_path, json.dumps(GOOD),
                         '{"id": "q2", "question": "caf\\udce9?", "answerable": false}')
    r = glassrag("eval", "--index", built, "--golden", golden, "--split", "all", "--save", "s")
    assert r.returncode == 4 and "a lone surrogate \\udce9" in r.stderr
    no_traceback(r)


@pytest.mark.slow
def test_a_byte_order_mark_is_accepted(built: Path, tmp_path: Path):
    golden = golden_file(tmp_path, b"\xef\xbb\xbf" + json.dumps(GOOD).encode())
    r = glassrag("golden", "check", golden, "--index", built)
    assert r.returncode == 0, r.stderr
    assert "1 questions, all valid" in r.stdout


@pytest.mark.slow
def test_control_characters_are_escaped_when_printed(tmp_path: Path):
    golden = golden_file(tmp_path, json.dumps(dict(GOOD, id="q\x1b[31mred")),
                         json.dumps(dict(GOOD, id="q\x1b[31mred", question="again")))
    r = glassrag("golden", "check", golden)
    assert r.returncode == 4
    assert "\x1b" not in r.stderr
    assert "'id' holds the control character U+001B" in r.stderr
    assert "id 'q\\x1b[31mred' already used on line 1" in r.stderr


@pytest.mark.slow
def test_every_problem_is_reported_at_once(built: Path, tmp_path: Path):
    """The shape of every line and, with --index, every label: one report, not one pass each."""
    golden = golden_file(
        tmp_path,
        json.dumps(dict(GOOD, answers=[{"doc": "manual", "locator": "§ 7 Nowhere"}])),
        '{"question": "no id", "split": "dev"}',
        json.dumps(dict(GOOD, id="q3", answers=[{"doc": "missing"}])))
    r = glassrag("golden", "check", golden, "--index", built)
    assert r.returncode == 4
    assert "5 problem(s)" in r.stderr
    for expected in (f"{golden}:1: q1: manual has no locator '§ 7 Nowhere'",
                     f"{golden}:2: missing field 'id'", f"{golden}:2: missing field 'answerable'",
                     f"{golden}:2: unknown split 'dev'",
                     f"{golden}:3: q3: document 'missing' is not in the index"):
        assert expected in r.stderr
    r = glassrag("eval", "--index", built, "--golden", golden)
    assert r.returncode == 4 and "5 problem(s)" in r.stderr


@pytest.mark.slow
def test_golden_check_and_eval_on_a_folder(built: Path, tmp_path: Path):
    folder = tmp_path / "notbeir"
    folder.mkdir()
    r = glassrag("golden", "check", folder)
    assert r.returncode == 4 and "not a BEIR folder (no queries.jsonl)" in r.stderr
    no_traceback(r)
    r = glassrag("eval", "--index", built, "--golden", folder)
    assert r.returncode == 4 and "not a BEIR folder (no queries.jsonl)" in r.stderr
    no_traceback(r)
    (folder / "queries.jsonl").write_text('{"_id": "1", "text": "quiet hours"}\n')
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tnotes\t1\n")
    r = glassrag("golden", "check", folder, "--index", built)
    assert r.returncode == 0 and "1 questions, all valid" in r.stdout, r.stderr


# settings and index files -------------------------------------------------------------

@pytest.mark.slow
def test_a_config_that_is_a_folder_or_not_utf8(built: Path, tmp_path: Path):
    r = glassrag("ask", "quiet hours", "--index", built, "--config", tmp_path)
    assert r.returncode == 2 and "cannot be read as a configuration file" in r.stderr
    no_traceback(r)
    latin = tmp_path / "latin.toml"
    latin.write_bytes('[chunk]\nchunker = "heading" # café\n'.encode("latin-1"))
    r = glassrag("ask", "quiet hours", "--index", built, "--config", latin)
    assert r.returncode == 2 and "not UTF-8" in r.stderr
    no_traceback(r)


@pytest.mark.slow
def test_an_index_line_of_the_wrong_shape_is_index_damage(built: Path, tmp_path: Path):
    import shutil

    idx = tmp_path / "idx"
    shutil.copytree(built, idx)
    gen = idx / (idx / "CURRENT").read_text().strip()
    lines = (gen / "documents.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["sections"] = "x"
    (gen / "documents.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    r = glassrag("ask", "quiet hours", "--index", idx)
    assert r.returncode == 3 and "index files damaged" in r.stderr
    no_traceback(r)


# the golden parser, as a property -----------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)
FIELDS = st.fixed_dictionaries({}, optional={
    "id": JSON | st.text(max_size=6), "question": JSON | st.text(max_size=20), "answerable": JSON,
    "split": st.sampled_from(["train", "test", "dev"]) | JSON, "kind": st.sampled_from(["lookup", "x"]) | JSON,
    "answers": JSON | st.lists(st.fixed_dictionaries({"doc": st.text(max_size=5) | JSON}), max_size=2),
    "must_contain": JSON})


@given(st.lists(FIELDS | JSON, min_size=1, max_size=4), st.booleans())
def test_the_golden_parser_answers_questions_or_a_golden_error(rows: list, bom: bool):
    """Whatever the lines hold, load_golden returns valid questions or raises GoldenError."""
    import tempfile

    from glassrag.errors import GoldenError
    from glassrag.evaluate.golden import load_golden

    text = "\n".join(json.dumps(r) for r in rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.jsonl"
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8", "surrogatepass"))
        try:
            questions = load_golden(path)
        except GoldenError as e:
            assert e.problems and all(isinstance(n, int) and isinstance(r, str) for n, r in e.problems)
            str(e).encode("utf-8")  # printable
            return
    for q in questions:
        assert isinstance(q.id, str) and q.id and isinstance(q.question, str) and q.question.strip()
        assert isinstance(q.answerable, bool) and q.split in ("train", "test")
        json.dumps(q.question).encode("utf-8")
        assert (q.question + q.id).encode("utf-8")
    assert len({q.id for q in questions}) == len(questions)
