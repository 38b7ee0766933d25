"""Issue 51.11: `python -m glassrag`, run from inside a folder someone shared (an index or a
corpus), does not import a planted `json.py` or `numpy.py` from it: `python -m` puts the
current folder first on the import path, and glassrag/__main__.py takes it off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from glassrag.cli import main

SRC = str(Path(__file__).resolve().parents[2] / "src")
PLANTED = "import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('ran')\nraise SystemExit(99)\n"


def test_planted_modules_in_the_current_folder_are_not_imported(tmp_path: Path, corpus: Path) -> None:
    index = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(index)]) == 0
    for name in ("json", "numpy"):
        (index / f"{name}.py").write_text(PLANTED)
    env = {**os.environ, "PYTHONPATH": SRC, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "glassrag", "ask", "What does E-4107 mean?", "--index", "."],
                          cwd=index, env=env, capture_output=True, text=True, timeout=300)
    assert not (index / "json.ran").exists() and not (index / "numpy.ran").exists()
    assert done.returncode == 0, done.stderr
    assert "E-4107" in done.stdout
