"""What a careless user types or hands over gets a message and a documented exit code
(2 a bad setting, 3 a damaged index, 4 a bad golden set), never a traceback (issue 13.4)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def glassrag(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "glassrag.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def no_traceback(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-3", "1e400"])
def test_max_mb_must_be_a_finite_positive_number(corpus: Path, tmp_path: Path, value: str):
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx", f"--max-mb={value}")
    assert r.returncode == 2
    assert f"argument --max-mb: '{value}' must be a finite number > 0" in r.stderr
    no_traceback(r)
    assert not (tmp_path / "idx").exists()


def test_lsa_dim_below_one_is_a_setting_error(corpus: Path, tmp_path: Path):
    """`[lsa] dim = -1` raised IndexError inside the SVD."""
    config = tmp_path / "c.toml"
    config.write_text("[lsa]\ndim = -1\n")
    r = glassrag("ingest", corpus, "--index", tmp_path / "idx", "--config", config)
    assert r.returncode == 2
    assert "[lsa] dim must be a whole number of at least 1, got -1" in r.stderr
    no_traceback(r)
