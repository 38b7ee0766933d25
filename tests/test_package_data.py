"""Every file the package reads is in the wheel: each non-Python file under src/glassrag
matches a package-data pattern of pyproject.toml (issue 27: the lab's templates were left out,
and the suite, run on the editable install, did not notice). scripts/wheel_smoke.py checks
the built wheel itself; this is its fast half."""

import os
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "glassrag"


def test_every_data_file_is_package_data():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["glassrag"]
    listed = {p.relative_to(PACKAGE).as_posix() for pattern in patterns for p in PACKAGE.glob(pattern) if p.is_file()}
    present = set()
    for folder, dirs, files in os.walk(PACKAGE, followlinks=True):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        present |= {(Path(folder) / f).relative_to(PACKAGE).as_posix() for f in files if not f.endswith((".py", ".pyc"))}
    assert present - listed == set()
    assert "web/templates/lab/index.html" in listed and "data/experiments/corpora.toml" in listed


def test_the_bundled_log_is_the_projects_log():
    from glassrag.demo import bundled_log, default_log

    assert bundled_log().resolve() == (ROOT / "experiments").resolve()
    assert default_log(ROOT) == ROOT / "experiments"
    assert default_log(ROOT / "docs") == bundled_log()


def test_demo_where_names_paths_that_exist(capsys):
    from glassrag.cli import main

    assert main(["demo", "--where"]) == 0
    rows = dict(line.split("\t") for line in capsys.readouterr().out.splitlines())
    assert set(rows) == {"docs", "golden", "sources", "log"}
    assert all(Path(p).exists() for p in rows.values())
