"""Issue 28.10: settings that would break every later ask are refused when the index is built
(exit 2, nothing written), and the hint lists only the retrievers this kind of index has."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.cli import main


@pytest.mark.parametrize("setting, named", [
    ('[retrieve]\nretrievers = ["nope"]\n', "unknown retriever(s) 'nope' in retrieve.retrievers"),
    ("[retrieve]\nretrievers = []\n", "retrieve.retrievers is empty"),
    ('[retrieve]\nobserve = ["nope"]\n', "unknown retriever(s) 'nope' in retrieve.observe"),
    ('[retrieve]\nretrievers = ["pg-bm25"]\n', "unknown retriever(s) 'pg-bm25' in retrieve.retrievers"),
])
def test_ingest_refuses_retrievers_the_index_cannot_run(tmp_path: Path, corpus: Path, capsys,
                                                        setting: str, named: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(setting)
    index = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(index), "--config", str(config)]) == 2
    said = capsys.readouterr().err
    assert named in " ".join(said.split())
    assert "this index can run: bm25, bm25-rm3, bm25-hyde, bm25-rewrite, bm25-decompose, lsa" in " ".join(said.split())
    assert "pg-bm25," not in said  # a folder index is not offered PostgreSQL's retrievers
    assert not (index / "CURRENT").exists()  # nothing was written


def test_a_valid_choice_is_still_stored(tmp_path: Path, corpus: Path) -> None:
    config = tmp_path / "good.toml"
    config.write_text('[retrieve]\nretrievers = ["bm25-rm3"]\nobserve = []\n')
    index = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(index), "--config", str(config)]) == 0
    assert main(["ask", "What does E-4107 mean?", "--index", str(index)]) == 0
