"""Issue 51, Low: a TOML file nested 100,000 deep (a --config file, a sweep grid, an experiment
entry) is a message naming the file, not a RecursionError traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.cli import main

DEEP = "a = " + "[" * 100_000 + "]" * 100_000 + "\n"


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    path = tmp_path / "deep.toml"
    path.write_text(DEEP)
    return path


def said(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err
    return " ".join(err.split())


def test_a_deep_config_file(deep: Path, tmp_path: Path, corpus: Path, capsys) -> None:
    assert main(["ingest", str(corpus), "--index", str(tmp_path / "i"), "--config", str(deep)]) == 2
    assert f"{deep}: nested too deep to be a configuration file" in said(capsys)
    assert main(["config", "--config", str(deep)]) == 2
    assert "nested too deep" in said(capsys)


def test_a_deep_sweep_grid(deep: Path, tmp_path: Path, corpus: Path, capsys) -> None:
    index = tmp_path / "i"
    assert main(["ingest", str(corpus), "--index", str(index)]) == 0
    capsys.readouterr()
    assert main(["sweep", "--index", str(index), "--golden", str(deep), "--grid", str(deep)]) == 2
    assert f"{deep}: nested too deep to be a sweep file" in said(capsys)


def test_a_deep_experiment_entry(tmp_path: Path, capsys) -> None:
    (tmp_path / "deep.toml").write_text(DEEP)
    assert main(["experiment", "list", "--log", str(tmp_path)]) == 2
    assert "nested too deep to be an experiment" in said(capsys)
