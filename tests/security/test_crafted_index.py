"""Issue 51.13: a crafted index is "index files damaged" (exit 3, no traceback) when it is
opened, whatever array or JSON file was changed: each array is checked against the tables it
indexes (store/shapes.py), each JSON file is parsed without a RecursionError escaping. And
`glassrag documents` shows a title's or locator's escape sequence as text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.cli import main
from tests.conftest import live_generation

DEEP = "[" * 100_000 + "]" * 100_000


def _npy(change):
    def craft(generation: Path, name: str) -> None:
        np.save(generation / name, change(np.load(generation / name)))
    return craft


def _text(text: str):
    def craft(generation: Path, name: str) -> None:
        (generation / name).write_text(text)
    return craft


CRAFTED = {  # file: how it is crafted (the first four are the audit's)
    "lexical/bm25.npy": _npy(lambda a: a.astype(str)),
    "lexical/doc_len.npy": _npy(lambda a: np.stack([a, a])),
    "chunk_offsets.npy": _npy(lambda a: a[:0]),
    "lexical/vocab.json": _text(DEEP),
    "doc_offsets.npy": _npy(lambda a: a[:0]),
    "lexical/tf_indices.npy": _npy(lambda a: a.astype(np.float64) + 0.5),
    "lexical/tf_indptr.npy": _npy(lambda a: a[:3]),
    "lexical/tf_data.npy": _npy(lambda a: a[:-1]),
    "lsa/passage_vectors.npy": _npy(lambda a: a.astype(str)),
    "lsa/term_vectors.npy": _npy(lambda a: a[:, :1].ravel()),
    "lsa/params.json": _text(DEEP),
    "doc_chunks.npy": _npy(lambda a: np.stack([a, a])),
    "chunk_text.npy": _npy(lambda a: a.ravel()),
    "chunk_ids.npy": _npy(lambda a: np.arange(len(a))),
    "chunk_words.npy": _npy(lambda a: a.astype(np.complex64)),
    "doc_hashes.npy": _npy(lambda a: a[:1]),
    "manifest.json": _text(DEEP),
    "lexical/vocab.json#not-a-list": _text(json.dumps({"a": 1})),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import write_corpus

    root = tmp_path_factory.mktemp("crafted")
    index = root / "index"
    assert main(["ingest", str(write_corpus(root / "docs")), "--index", str(index),
                 "--config", str(_lsa(root))]) == 0
    return index


def _lsa(root: Path) -> Path:
    config = root / "lsa.toml"
    config.write_text('[retrieve]\nretrievers = ["bm25", "lsa"]\n[lsa]\ndim = 4\n')
    return config


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_a_crafted_file_is_index_damage_not_a_traceback(built: Path, tmp_path: Path, capsys, name: str) -> None:
    import shutil

    index = tmp_path / "index"
    shutil.copytree(built, index)
    CRAFTED[name](live_generation(index), name.split("#")[0])
    for command in (["ask", "What does E-4107 mean?"], ["documents"]):
        assert main([*command, "--index", str(index)]) == 3
        said = capsys.readouterr().err
        assert "index files damaged" in said or "manifest unreadable" in said
        assert "Traceback" not in said


def test_documents_shows_escape_sequences_as_text(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Head \x1b[31mred\x1b]0;owned\x07\n\n## Part \x1b[2J two\n\nSome text here.\n")
    index = tmp_path / "index"
    assert main(["ingest", str(docs), "--index", str(index)]) == 0
    capsys.readouterr()
    assert main(["documents", "--index", str(index), "--sections"]) == 0
    said = capsys.readouterr().out
    assert "\x1b" not in said and "\x07" not in said
    assert "\\x1b[31mred" in said and "\\x1b[2J two" in said
