"""Issue 51, Low: a corpus with no word to index (stopwords and punctuation only) crashed ingest
in the LSA step with a numpy traceback; now it is a message, and no index is written."""

from __future__ import annotations

from pathlib import Path

from glassrag.cli import main


def test_a_corpus_without_an_indexable_word_is_a_message(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("the and of to a\n")
    (docs / "b.txt").write_text("!!! ??? ...\n")
    index = tmp_path / "index"
    assert main(["ingest", str(docs), "--index", str(index)]) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert "none of its 2 chunk(s) has a word to index" in said and "Traceback" not in said
    assert not index.exists()
