"""docs/architecture.md's "How to add …" counts, checked (issue 50): a toy retriever, reranker,
gate rule, setting and document format are each added to a copy of the source tree by the
edits that section describes, each touches the number of files the section's heading states,
and the copy then runs them: the retriever fused, the reranker chosen by rerank.method, the
rule accepted by gate.rule and picking its threshold, the setting checked and traced, the
format read by ingest."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts Python on the copy

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"

# each toy: {file under src/glassrag: the new file's text, or [(text there, text instead), ...]}
TOYS: dict[str, dict[str, str | list[tuple[str, str]]]] = {
    "retriever": {
        "retrieve/firstword.py": '''"""Ranks the chunks that hold the question's first word, by how often."""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import StageOutput


class FirstWord:
    name = "firstword"
    kind = Kind.RETRIEVE

    def __init__(self, index: Any, config: Any, bm25: Any) -> None:
        self.index = index
        self.searched = len(index.chunks)

    def params(self) -> dict[str, Any]:
        return {"family": "lexical"}

    def run(self, query: Query, inputs: Mapping[str, StageOutput]) -> StageOutput:
        word = query.tokens[0]
        counts = [(c.id, float(c.text.lower().count(word))) for c in self.index.chunks]
        ranked = sorted((x for x in counts if x[1] > 0), key=lambda x: -x[1])
        return StageOutput(tuple(Hit(cid, s, r, self.name) for r, (cid, s) in enumerate(ranked, 1)))


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "", "how often the chunk holds the question's first word"
''',
        "retrieve/__init__.py": [
            ("from glassrag.retrieve import bm25, generated, lsa, neural, rm3, shards\n",
             "from glassrag.retrieve import bm25, firstword, generated, lsa, neural, rm3, shards\n"),
            ('    "bm25": Entry(bm25.BM25Retriever, bm25.describe_score, term="BM25"),\n',
             '    "bm25": Entry(bm25.BM25Retriever, bm25.describe_score, term="BM25"),\n'
             '    "firstword": Entry(firstword.FirstWord, firstword.describe_score),\n'),
        ],
    },
    "reranker": {
        "rerank/reverse.py": '''"""Reverses the list it is given, scoring by the new rank."""

from __future__ import annotations

from typing import Any, Mapping

from glassrag.query import Query
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import ListStage


class Reverse(ListStage):
    name = "rerank"
    kind = Kind.RERANK

    def params(self) -> dict[str, Any]:
        return {"method": "reverse"}

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        n = len(hits)
        return [Hit(h.chunk_id, float(n - r), r + 1, self.name) for r, h in enumerate(reversed(hits))], []


def made(index: Any, config: Any, bm25: Any) -> Reverse:
    return Reverse()


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "", "the list's length less the new rank"
''',
        "rerank/__init__.py": [
            ("from glassrag.rerank import cross_encoder, learned\n",
             "from glassrag.rerank import cross_encoder, learned, reverse\n"),
            ('    "cross-encoder": Entry(cross_encoder.made, cross_encoder.describe_score),\n',
             '    "cross-encoder": Entry(cross_encoder.made, cross_encoder.describe_score),\n'
             '    "reverse": Entry(reverse.made, reverse.describe_score),\n'),
        ],
    },
    "gate rule": {
        "gate/rules.py": [
            ("\n\nRULES: dict[str, Rule] = {\n",
             '\n\ndef lowest(rows: Sequence[Row], c: float) -> Row:\n'
             '    """The lowest threshold: declines nothing that has a score."""\n'
             '    return min(rows, key=lambda r: r["threshold"])\n'
             "\n\nRULES: dict[str, Rule] = {\n"
             '    "lowest": Rule(lowest, unanswerable_answered),\n'),
        ],
    },
    "setting": {
        "config/sections.py": [
            ('    per_document: int = setting(0, "at most M passages per document (0: no cap)",\n',
             '    toy: int = setting(3, "a toy", "none: a test", low=0, high=9)\n'
             '    per_document: int = setting(0, "at most M passages per document (0: no cap)",\n'),
        ],
        "rerank/cap.py": [
            ("DocumentCap(ChunkDocs(index), config.cap.per_document)",
             "DocumentCap(ChunkDocs(index), config.cap.per_document, config.cap.toy)"),
            ("per_document: int = 2) -> None:\n", "per_document: int = 2, toy: int = 3) -> None:\n"
             "        self.toy = toy\n"),
            ('return {"per_document": self.per_document}', 'return {"per_document": self.per_document, "toy": self.toy}'),
        ],
    },
    "document format": {
        "ingest/shout.py": '''"""A .shout file: plain text written in capitals, read as one section in lower case."""

from __future__ import annotations

from pathlib import Path

from glassrag.ingest.base import Extracted, TextBuilder, decode


def load_shout(path: Path, data: bytes) -> Extracted:
    builder = TextBuilder()
    builder.open_section("lines")
    builder.add(decode(path, data).lower().strip("\\n"))
    text, sections = builder.build()
    return Extracted(title=path.stem, text=text, sections=sections, format="shout")
''',
        "ingest/__init__.py": [('    ".txt": "text:load_text",\n',
                                '    ".shout": "shout:load_shout",\n    ".txt": "text:load_text",\n')],
    },
}

# what the copy runs with every toy added: each one used, and checked
CHECK = '''
import sys
from pathlib import Path

from glassrag.config import Config
from glassrag.errors import ConfigError
from glassrag.gate.calibrate import choose, sweep
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

docs = Path(sys.argv[1])
config = Config().with_overrides(retrieve={"retrievers": ["firstword", "bm25"], "observe": []},
                                 rerank={"method": "reverse"}, cap={"per_document": 2, "toy": 7},
                                 gate={"rule": "lowest"})
index, report = build_index([docs], config)
assert not report.failed, report.failed
assert {c.doc_id for c in index.chunks} == {"manual", "loud"}, {c.doc_id for c in index.chunks}
assert any("valve" in c.text and "VALVE" not in c.text for c in index.chunks)  # the .shout, read
answer = Pipeline(index, config).run("valve pressure")
kinds = {t.name: t.kind for t in answer.trace}
assert kinds["firstword"] == "retrieve" and answer.stage("firstword").hits
assert answer.stage("fuse").inputs == ("firstword", "bm25")
assert answer.stage("rerank").params["method"] == "reverse"
fused = [h.chunk_id for h in answer.stage(answer.stage("rerank").inputs[0]).hits]
assert [h.chunk_id for h in answer.stage("rerank").hits] == fused[::-1]
assert answer.stage("cap").params["toy"] == 7
try:
    Config().with_overrides(cap={"toy": 10})
    raise AssertionError("cap.toy = 10 accepted")
except ConfigError:
    pass
rows = sweep([2.0, 3.0], [1.0, 2.5])
assert choose(rows, "lowest")["threshold"] == min(r["threshold"] for r in rows)
print("every toy ran")
'''


def stated() -> dict[str, int]:
    """What docs/architecture.md's "How to add" headings say each addition touches."""
    found = dict(re.findall(r"^### An? ([a-z ]+): (\d+) files?$", DOC.read_text(), flags=re.M))
    return {what: int(n) for what, n in found.items()}


def add(src: Path, edits: dict[str, str | list[tuple[str, str]]]) -> None:
    for name, edit in edits.items():
        path = src / name
        if isinstance(edit, str):
            assert not path.exists(), f"{name} is already there"
            path.write_text(edit)
            continue
        text = path.read_text()
        for old, new in edit:
            assert text.count(old) == 1, f"{name}: {old!r} is not there once; change the toy's edit"
            text = text.replace(old, new)
        path.write_text(text)


def test_the_doc_states_a_count_for_each_toy():
    assert set(TOYS) <= set(stated()), sorted(stated())


@pytest.mark.parametrize("what", sorted(TOYS))
def test_each_addition_touches_the_files_the_doc_states(what):
    assert len(TOYS[what]) == stated()[what], (what, sorted(TOYS[what]))


def test_the_toys_run_in_a_copy_of_the_tree(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "glassrag", src / "glassrag", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(src): p.read_bytes() for p in src.rglob("*.py")}
    for edits in TOYS.values():
        add(src / "glassrag", edits)
    after = {p.relative_to(src): p.read_bytes() for p in src.rglob("*.py")}
    touched = {str(p.relative_to("glassrag")) for p in after if before.get(p) != after[p]}
    assert touched == {name for edits in TOYS.values() for name in edits}
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.txt").write_text("Valve maintenance.\n\nCheck the valve pressure weekly.\n")
    (docs / "loud.shout").write_text("THE VALVE PRESSURE MUST STAY BELOW TEN BAR.\n")
    ran = subprocess.run([sys.executable, "-c", CHECK, str(docs)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(src), "HF_HUB_OFFLINE": "1"})
    assert ran.returncode == 0 and "every toy ran" in ran.stdout, ran.stderr[-3000:]
