"""`glassrag corpus build` and `corpus list` on a small prepared corpus written here, run as
a user runs them (a subprocess, in a temporary folder that plays the checkout)."""

import json
import subprocess
from pathlib import Path

import pytest

from glassrag.schema import Run
from glassrag.store import open_store
from tests.cli_helper import glassrag

# every test here starts glassrag as a separate process (tests/cli_helper.py)
pytestmark = pytest.mark.slow

DOCS = {
    "green-tea.md": """# Green tea

## Brewing green tea

Green tea is brewed with water at 75 degrees Celsius for two minutes. Boiling water scalds the
leaves and makes the cup bitter.

## Storing green tea

Keep green tea in an airtight tin away from light; opened leaves stay fresh for about six months.
""",
    "black-tea.md": """# Black tea

## Brewing black tea

Black tea wants freshly boiled water and four minutes of steeping. A longer steep releases tannins.

## Milk and sugar

Milk softens the tannins of a strong black tea; sugar is a matter of taste.
""",
    "oolong.md": """# Oolong

## Rinsing the leaves

Rolled oolong leaves are rinsed once with hot water, which is poured away before the first infusion.

## Several infusions

The same oolong leaves give five or six infusions, each a little longer than the one before.
""",
    "matcha.md": """# Matcha

## Whisking

Matcha powder is sifted into a bowl and whisked with a bamboo chasen in a quick zigzag until it foams.

## Grades

Ceremonial grade matcha is drunk on its own; culinary grade matcha goes into baking and lattes.
""",
}


def answerable(i: int, split: str, question: str, doc: str, locator: str, text: str) -> dict:
    return {"id": f"t{i:02d}", "question": question, "split": split, "kind": "lookup", "answerable": True,
            "answers": [{"doc": doc, "locator": locator, "text": text}]}


GOLDEN = [
    answerable(1, "train", "At what temperature is green tea brewed?", "green-tea", "§ Brewing green tea",
               "water at 75 degrees Celsius"),
    answerable(2, "train", "How long do black tea leaves steep?", "black-tea", "§ Brewing black tea",
               "four minutes of steeping"),
    answerable(3, "train", "How many infusions do oolong leaves give?", "oolong", "§ Several infusions",
               "five or six infusions"),
    answerable(4, "train", "What is matcha whisked with?", "matcha", "§ Whisking", "a bamboo chasen"),
    answerable(5, "test", "How long does opened green tea stay fresh?", "green-tea", "§ Storing green tea",
               "about six months"),
    answerable(6, "test", "What does milk do to black tea?", "black-tea", "§ Milk and sugar",
               "Milk softens the tannins"),
    answerable(7, "test", "Why are oolong leaves rinsed before the first infusion?", "oolong",
               "§ Rinsing the leaves", "rinsed once with hot water"),
    answerable(8, "test", "Which grade of matcha goes into baking?", "matcha", "§ Grades",
               "culinary grade matcha goes into baking"),
    {"id": "t09", "question": "How much caffeine does a cup of white tea hold?", "split": "train",
     "kind": "unanswerable", "answerable": False},
    {"id": "t10", "question": "Which country grows the most rooibos?", "split": "test",
     "kind": "unanswerable", "answerable": False},
    {"id": "t11", "question": "Who won the 1998 football world cup?", "split": "train",
     "kind": "off-topic", "answerable": False},
    {"id": "t12", "question": "What is the boiling point of mercury?", "split": "test",
     "kind": "off-topic", "answerable": False},
]


def prepared(root: Path, name: str, golden: list[dict] = GOLDEN) -> Path:
    folder = root / "corpora" / name
    (folder / "docs").mkdir(parents=True)
    for file, text in DOCS.items():
        (folder / "docs" / file).write_text(text, encoding="utf-8")
    (folder / "golden.jsonl").write_text("".join(json.dumps(q) + "\n" for q in golden), encoding="utf-8")
    (folder / "README.md").write_text("# Tea: a prepared corpus\n\nFour pages on tea.\n", encoding="utf-8")
    return folder


def test_build_makes_the_index_its_calibration_and_its_run(tmp_path: Path):
    prepared(tmp_path, "tea")
    r = glassrag("corpus", "list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "tea" in r.stdout and "not built" in r.stdout and "Tea: a prepared corpus" in r.stdout

    r = glassrag("corpus", "build", "tea", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for stage in ("1. ingest Tea", "2. check the golden set", "3. train the reranker", "4. evaluate"):
        assert stage in r.stdout
    assert "12 questions, all valid" in r.stdout
    for figure in ("ranking hit@5", "answer hit@5", "declined unanswerable", "of which kind unanswerable",
                   "of which kind off-topic", "answerable declined"):
        assert figure in r.stdout, figure
    # four train questions cannot make a learned reranker of ten features: said, not hidden
    assert "mostly noise" in " ".join(r.stderr.split())

    index = tmp_path / ".glassrag" / "corpora" / "tea"
    extra = open_store(str(index)).read().extra
    assert {"reranker", "gate", "reader"} <= set(extra)
    run = Run.from_dict(json.loads((index / "runs" / "defaults-test.json").read_text()), "run")
    assert run.golden["split"] == "test" and run.golden["questions"] == 6
    assert run.golden["unanswerable"] == 2 and run.index["documents"] == 4

    r = glassrag("corpus", "list", cwd=tmp_path)
    assert str(Path(".glassrag") / "corpora" / "tea") in r.stdout and "not built" not in r.stdout

    # served from another folder (this process's), the index keeps its golden set (issue 49, item 6)
    golden = (tmp_path / "corpora" / "tea" / "golden.jsonl").resolve()
    assert extra["gate"]["golden"] == extra["reranker"]["golden"] == run.golden["path"] == str(golden)
    from glassrag.web.catalog import Catalog

    assert Path.cwd().resolve() != tmp_path.resolve()
    served = Catalog([index]).sources["tea"].golden()
    assert served is not None and served.path == golden and len(served.questions) == 12


def test_a_bad_golden_set_stops_the_build_naming_its_line(tmp_path: Path):
    bad = [*GOLDEN[:4], dict(GOLDEN[4], answers=[{"doc": "green-tea", "locator": "§ Nowhere",
                                                  "text": "about six months"}]), *GOLDEN[5:]]
    folder = prepared(tmp_path, "tea", bad)
    index = tmp_path / "built"
    r = glassrag("corpus", "build", folder, "--index", index, cwd=tmp_path)  # a folder, not a name
    assert r.returncode == 4
    assert f"{folder / 'golden.jsonl'}:5:" in r.stderr and "§ Nowhere" in r.stderr
    assert "Traceback" not in r.stderr
    assert (index / "CURRENT").exists()  # ingested, then stopped: nothing trained, nothing evaluated
    assert "reranker" not in open_store(str(index)).read().extra
    assert not (index / "runs").exists()


@pytest.mark.parametrize("what, message", [("nothing", "choose one of: tea"), ("no-golden", "golden.jsonl")])
def test_an_unknown_or_incomplete_corpus_is_named(tmp_path: Path, what: str, message: str):
    prepared(tmp_path, "tea")
    (tmp_path / "corpora" / "no-golden" / "docs").mkdir(parents=True)
    r = glassrag("corpus", "build", what, cwd=tmp_path)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
