"""Start-up: building the argument parser and answering --help import nothing heavy (issue 30:
`calibrate --rule`'s choices imported scipy.stats and `--labels` glassrag.generate, 0.98 of an
ask's 1.08 CPU s), and neither does answering a question (`rerank.method = auto` read the
reranker's cross-validation summary through glassrag.stats, which imported scipy.stats: 0.5 CPU
s of every ask); each check runs in a fresh process and reads its sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from glassrag.store.embedded import EmbeddedStore

HEAVY = ("torch", "sentence_transformers", "scipy.stats", "scipy.optimize", "onnxruntime")

PROBE = """
import json, sys
from glassrag.cli import build_parser, main
parser = build_parser()
if sys.argv[1:]:
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def modules_after(*argv: str) -> set[str]:
    r = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


@pytest.mark.slow
def test_building_the_parser_imports_no_library_beyond_the_standard_one():
    loaded = modules_after()
    assert not loaded & {*HEAVY, "numpy", "scipy", "glassrag.generate", "glassrag.store", "glassrag.gate"}, \
        sorted(loaded & {*HEAVY, "numpy", "scipy", "glassrag.generate", "glassrag.store", "glassrag.gate"})


COMMANDS = ["ingest", "documents", "ask", "golden", "eval", "compare", "trec", "experiment", "rerank-train",
            "calibrate", "train-cross-encoder", "serve", "config", "sweep", "demo", "corpus", "shard"]


def test_the_list_of_commands_is_the_parsers():
    import argparse

    from glassrag.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert sorted(sub.choices) == sorted(COMMANDS)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_a_commands_help_imports_nothing_heavy(command: str):
    assert not modules_after(command, "--help") & set(HEAVY)


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS)
def test_no_commands_help_imports_numpy(command: str):
    # `ask --help` imported numpy (0.2 CPU s) through --labels' choices: glassrag.generate's
    # package imported glassrag.query, which named numpy's array type at import; `calibrate`,
    # `sweep` and `ingest` read their choices and default from modules that compute with it
    assert not modules_after(command, "--help") & {"numpy", "scipy"}


def test_help_lists_the_choices_it_imports_lazily(capsys):
    from glassrag.cli import main

    for argv, expected in ((["calibrate", "--help"], "cost, balanced, keep95"),
                           (["ask", "--help"], "title, numbered"),
                           (["ingest", "--help"], "default 100")):
        with pytest.raises(SystemExit):
            main(argv)
        assert expected in " ".join(capsys.readouterr().out.split())


@pytest.mark.slow
def test_answering_a_question_imports_nothing_heavy(index, tmp_path):
    folder = tmp_path / "index"
    EmbeddedStore(folder).write(index)
    loaded = modules_after("ask", "--index", str(folder), "How many vacation days do I get?")
    assert "glassrag.pipeline" in loaded and "glassrag.rerank.learned_cv" in loaded  # it did answer
    assert not loaded & {*HEAVY, "scipy"}, sorted(loaded & {*HEAVY, "scipy"})  # BM25 and LSA read plain arrays
    # nor what only ingesting, evaluating or another command's tables need (their modules' regular
    # expressions and dataclasses, and rich, were made by every ask: bench/startup.py)
    unneeded = {"glassrag.ingest.pdf", "glassrag.ingest.html", "glassrag.ingest.xlsx", "glassrag.ingest.quality",
                "glassrag.schema.run", "glassrag.schema.records", "rich", "glassrag.chunk.fixed", "socket"}
    assert not loaded & unneeded, sorted(loaded & unneeded)


@pytest.mark.slow
def test_a_commands_process_starts_openblas_on_one_thread(monkeypatch):
    """Every BLAS call glassrag makes runs on one thread; OpenBLAS's own pool, started when numpy
    loads, is not started wider (a user's own setting stands)."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    probe = "import os; from glassrag.cli import main; main(['config']); print(os.environ['OPENBLAS_NUM_THREADS'])"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().splitlines()[-1] == "1", r.stderr
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().splitlines()[-1] == "3"


@pytest.mark.slow
def test_an_ask_runs_blas_on_one_thread_without_asking_threadpoolctl(index, tmp_path, monkeypatch):
    """The command started every BLAS on one thread (`threads.before_numpy`), so `configure` leaves
    threadpoolctl unimported (its scan of the libraries was 9.5 ms an ask); a user's wider
    OPENBLAS_NUM_THREADS is still brought down to one thread for every call."""
    folder = tmp_path / "index"
    EmbeddedStore(folder).write(index)
    probe = ("import json, sys; from glassrag.cli import main; main(['ask', '--index', sys.argv[1], 'quiet hours']); "
             "asked = 'threadpoolctl' in sys.modules; from threadpoolctl import threadpool_info; "
             "print(json.dumps([asked, sorted({p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas'})]))")
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    r = subprocess.run([sys.executable, "-c", probe, str(folder)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [False, [1]]
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    r = subprocess.run([sys.executable, "-c", probe, str(folder)], capture_output=True, text=True, timeout=120)
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [True, [1]]
