"""Issue 51.9: an experiment file cannot name what glassrag contacts. Experiment folders are
shared in repositories; a `[change]` or `[baseline]` with `generate.backend` would have every
question and passage (and GLASSRAG_GENERATE_KEY) sent there. It is refused when the file is
read, with the file and the setting named; only the user's own settings can name an endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.errors import ConfigError
from glassrag.experiment.log import load

ENTRY = '''title = "t"
hypothesis = "h"
verdict = "kept"
metric = "answer hit@5"
corpora = ["demo"]
[{table}]
generate = {{ enabled = true, backend = "http://127.0.0.1:9/v1" }}
'''


@pytest.mark.parametrize("table", ["change", "baseline"])
def test_an_experiment_naming_an_endpoint_is_refused(tmp_path: Path, table: str) -> None:
    path = tmp_path / "leak.toml"
    text = ENTRY.format(table=table)
    if table == "baseline":
        text += "[change]\nrerank = { pool = 50 }\n"
    path.write_text(text)
    with pytest.raises(ConfigError) as raised:
        load(path)
    said = str(raised.value)
    assert str(path) in said
    assert f"[{table}] sets generate.backend: an experiment file cannot name what glassrag contacts" in said


def test_the_cli_says_so_and_runs_nothing(tmp_path: Path, capsys) -> None:
    (tmp_path / "leak.toml").write_text(ENTRY.format(table="change"))
    assert main(["experiment", "run", "leak", "--log", str(tmp_path)]) == 2
    assert "cannot name what glassrag contacts" in " ".join(capsys.readouterr().err.split())


def test_other_generation_settings_stay_allowed(tmp_path: Path) -> None:
    path = tmp_path / "fine.toml"
    path.write_text(ENTRY.format(table="change").replace(', backend = "http://127.0.0.1:9/v1"', ""))
    assert load(path).change == {"generate": {"enabled": True}}
