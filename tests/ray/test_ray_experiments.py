"""Experiments run on the local 3-node Ray cluster (tests/ray/conftest.py) give the evidence the
sequential run gives, the seconds aside: a test-only log of two experiments on the four-file
handbook, one whose change keeps the index (its baseline and change one unit, the baseline shared
with the other experiment) and one whose change needs another index (a unit of its own)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from glassrag.cli import main
from glassrag.evaluate.variant import cache_counts
from glassrag.experiment import load_all, work_folder, write_evidence
from glassrag.experiment.corpora import load_corpora
from glassrag.experiment.measure import Measurer
from glassrag.experiment.on_ray import experiment_units, run_experiments_on_ray
from tests.conftest import comparable_data, write_corpus
from tests.evaluate.test_sweep_small import write_golden

# the handbook's fast settings (tests/evaluate/test_sweep_small.py CONFIG)
BASELINE = '''[baseline]
lsa = { dim = 4 }
gate = { offtopic = false, answerability = "none" }
'''


def entry(title: str, corpora: str, change: str) -> str:
    return (f'title = "{title}"\nhypothesis = "a test"\nmetric = "ranking mrr@10"\nalso = ["answer hit@5"]\n'
            f'corpora = {corpora}\nverdict = "rejected"\n{BASELINE}[change]\n{change}\n')


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_corpus(tmp_path / "docs")
    write_golden(tmp_path / "golden.jsonl")
    folder = tmp_path / "experiments"
    folder.mkdir()
    (folder / "corpora.toml").write_text(
        '[hb]\ntitle = "the handbook"\ndocuments = ["docs"]\ngolden = "golden.jsonl"\n'
        '[gone]\ntitle = "not here"\ndocuments = ["nowhere"]\ngolden = "golden.jsonl"\n')
    (folder / "k1.toml").write_text(entry("k1", '["hb"]', "bm25 = { k1 = 0.9 }"))
    (folder / "size.toml").write_text(entry("size", '["hb", "gone"]', "chunk = { size = 12 }"))
    return Path("experiments")


def comparable(evidence: dict) -> dict:
    return {k: v for k, v in json.loads(json.dumps(evidence)).items() if k != "seconds"}


def run_file(path: str) -> dict:
    return comparable_data(json.loads(Path(path).read_text()))


def test_the_units_are_the_runs_of_one_index(log):
    experiments = load_all(log)
    units = experiment_units(experiments, load_corpora(log))
    # the k1 experiment's baseline and change share an index, and the size experiment's baseline is
    # the same configuration (run once); its change needs another index; "gone" is not here
    assert [(u.corpus, len(u.arms)) for u in units] == [("hb", 2), ("hb", 1)]
    assert units[0].arms[0][0].key() == experiments[1].configs()[0].key()
    assert units[1].arms[0][0].chunk.size == 12
    kept = {"k1": {"corpora": {"hb": {"metrics": {}}}}, "size": None}  # --corpus gone: hb's kept for k1
    assert [len(u.arms) for u in experiment_units(experiments, load_corpora(log), ["gone"], kept)] == [1, 1]
    assert experiment_units(experiments[:1], load_corpora(log), ["gone"], kept) == []


def test_experiments_on_ray_give_the_sequential_evidence(cluster, log):
    experiments = load_all(log)
    work = work_folder(log)
    measurer = Measurer(work, load_corpora(log), work / "runs")
    one = [measurer.measure(e) for e in experiments]
    for evidence in one:
        write_evidence(log, evidence)
    counts = cache_counts(measurer.workbench(load_corpora(log)["hb"]).variants())
    runs = {side: run_file(path) for e in one for side, path in e["corpora"]["hb"]["runs"].items()}
    shutil.rmtree(work / "indexes")  # built again on the cluster
    said: list[str] = []
    many = run_experiments_on_ray(log, experiments, said.append)
    assert [comparable(e) for e in many] == [comparable(e) for e in one]
    assert one[1]["corpora"]["gone"] == {"skipped": f"{Path('nowhere').resolve()} is not on this machine"}
    for e in many:
        assert json.loads((log / "results" / f"{e['name']}.json").read_text()) == e
    assert {side: run_file(path) for e in many for side, path in e["corpora"]["hb"]["runs"].items()} == runs
    # the units kept each index's cache whole: every reuse of the sequential run happened
    assert said[-1] == (f"stage cache over the units: {counts['hits']:,} stage outputs reused, "
                        f"{counts['misses']:,} computed") and counts["hits"] > 0
    assert said[0] == "2 units (3 runs) on the cluster"


def test_the_cli_runs_experiments_on_ray_as_without_it(cluster, log, capsys):
    code = main(["experiment", "run", "--all", "--log", str(log)])
    shown = capsys.readouterr().out
    assert main(["experiment", "run", "--all", "--log", str(log), "--ray"]) == code
    again = capsys.readouterr().out

    def steady(text: str) -> str:
        return re.sub(r"\[[0-9.]+ s\]", "[s]", text)

    assert steady(again) == steady(shown) and "k1" in shown and "size" in shown
