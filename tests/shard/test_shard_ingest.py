"""`glassrag ingest --ray / --shards` where Ray is not needed to tell: the one-machine ingest
never imports Ray, and where Ray is absent an ingest on the cluster says how to install it and
writes nothing (tests/ray/test_ray_ingest.py runs the ingest on a cluster)."""

from __future__ import annotations

import subprocess
import sys

from glassrag.cli import main
from tests.conftest import HANDBOOK, write_corpus


def test_the_one_machine_ingest_never_imports_ray(tmp_path):
    docs = write_corpus(tmp_path / "docs", HANDBOOK)
    code = ("import sys; from glassrag.cli import main; "
            f"assert main(['ingest', {str(docs)!r}, '--index', {str(tmp_path / 'idx')!r}]) == 0; "
            "print('ray' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_without_ray_an_ingest_on_the_cluster_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    docs = write_corpus(tmp_path / "docs", HANDBOOK)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    for flags in (["--ray"], ["--shards", "2"]):
        assert main(["ingest", str(docs), "--index", str(tmp_path / "idx"), *flags]) == 8
        said = capsys.readouterr().err
        assert "an ingest on a Ray cluster (--ray, --shards) needs Ray" in said and "pip install 'glassrag[ray]'" in said
        assert not (tmp_path / "idx").exists()
