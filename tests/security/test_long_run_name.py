"""Issue 51, low: `eval --save` with a 5,000-character name evaluated the split, then failed
with a traceback (`File name too long`) when it made the run file. The name is now refused
before the evaluation, with the file system's limit; the pages given such a name answer 404."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.demo import demo_docs

LONG = "r" * 5000


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    made = tmp_path_factory.mktemp("longname") / "demo"
    assert main(["ingest", str(demo_docs()), "--index", str(made)]) == 0
    return made


def test_a_name_longer_than_the_file_system_takes_is_refused_with_a_message(
        index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = demo_docs().parent / "golden.jsonl"
    code = main(["eval", "--index", str(index), "--golden", str(golden), "--split", "test", "--save", LONG])
    said = capsys.readouterr()
    assert code == 2
    assert "the run name is 5,000 bytes long" in said.err + said.out
    assert "evaluating" not in said.err  # refused before the evaluation
    assert not (index / "runs").is_dir() or not [p for p in (index / "runs").iterdir() if LONG[:50] in p.name]


def test_a_name_with_a_folder_is_refused(index: Path, capsys: pytest.CaptureFixture[str]) -> None:
    golden = demo_docs().parent / "golden.jsonl"
    assert main(["eval", "--index", str(index), "--golden", str(golden), "--split", "test",
                 "--save", "../outside"]) == 2
    assert "is not a run name" in capsys.readouterr().err


def test_a_name_that_fits_is_saved(index: Path) -> None:
    golden = demo_docs().parent / "golden.jsonl"
    name = "n" * 200  # 200 + the temporary file's 23 bytes fit in 255
    assert main(["eval", "--index", str(index), "--golden", str(golden), "--split", "test", "--save", name]) == 0
    assert (index / "runs" / f"{name}.json").is_file()


def test_the_pages_answer_404_to_a_long_run_name(index: Path) -> None:
    pytest.importorskip("httpx")
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    client = TestClient(create_app([index]), base_url="http://127.0.0.1")
    for path, params in (("/analytics", {"run": LONG}), (f"/runs/{LONG}", {}), (f"/runs/{LONG}.json", {}),
                         ("/ask.json", {"q": "What does E-4107 mean?", "run": LONG})):
        assert client.get(path, params=params).status_code == 404, path
