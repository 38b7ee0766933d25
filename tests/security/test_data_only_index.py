"""Issue 28.1: an index folder is data. Each of the audit's three attacks is planted in a real
index folder and `glassrag` is run the way a user runs it (a child process): no code is
imported or executed, nothing is contacted, and the user is told why."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from glassrag.cli import drop_current_folder, main
from glassrag.models import installed_model_folder
from tests.cli_helper import glassrag as cli
from tests.conftest import live_generation

SRC = str(Path(__file__).resolve().parents[2] / "src")
ZEN = "Beautiful is better than ugly"


def glassrag(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m glassrag.cli ARGS` in `cwd`, with this checkout's code, as a user runs it."""
    return cli(*args, cwd=cwd, env={"PYTHONPATH": SRC, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})


@pytest.fixture
def index(tmp_path: Path, corpus: Path) -> Path:
    folder = tmp_path / "index"
    assert main(["ingest", str(corpus), "--index", str(folder)]) == 0
    return folder


def plant(index: Path, **sections: dict) -> None:
    manifest = live_generation(index) / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    for section, values in sections.items():
        data["config"].setdefault(section, {}).update(values)
    manifest.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.slow
def test_a_model_name_in_the_manifest_is_not_imported(index: Path, tmp_path: Path) -> None:
    plant(index, rerank={"method": "cross-encoder", "model": "this"})
    done = glassrag("ask", "What does E-4107 mean?", "--index", str(index), cwd=tmp_path)
    assert ZEN not in done.stdout + done.stderr  # `import this` prints the Zen of Python
    assert done.returncode == 2, done.stderr
    assert "'this' is neither a folder nor an installed package" in done.stderr


def test_an_installed_model_package_is_found_without_importing_it(tmp_path: Path, monkeypatch) -> None:
    package = tmp_path / "site" / "planted_model"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("raise SystemExit('imported')\n")
    (package / "model" / "config.json").write_text("{}")
    (tmp_path / "site" / "no_model").mkdir()
    (tmp_path / "site" / "no_model" / "__init__.py").write_text("raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert installed_model_folder("planted-model") == package / "model"
    assert installed_model_folder("no_model") is None  # a package that carries no model files
    assert installed_model_folder("this") is None  # a module, not a package with a model
    assert installed_model_folder("os.path") is None  # a dotted name would import its parents
    assert "planted_model" not in sys.modules and "this" not in sys.modules


@pytest.mark.slow
def test_a_python_file_in_the_current_folder_is_not_imported(index: Path, tmp_path: Path) -> None:
    # rich is imported by glassrag.cli itself: a planted rich.py would run before any command
    (index / "rich.py").write_text("print('PLANTED CODE RAN')\nraise SystemExit(99)\n")
    (index / "numpy.py").write_text("print('PLANTED CODE RAN')\nraise SystemExit(99)\n")
    done = glassrag("ask", "What does E-4107 mean?", "--index", ".", cwd=index)
    assert "PLANTED CODE RAN" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stderr
    assert "E-4107" in done.stdout


def test_the_current_folder_is_dropped_from_the_import_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert drop_current_folder([str(tmp_path), "/lib", "", "/site"], True) == ["/lib", "/site"]
    # imported as a library (pytest, a script), only the empty entry goes
    assert drop_current_folder([str(tmp_path), "/lib", ""], False) == [str(tmp_path), "/lib"]


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        Recorder.seen.append(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        body = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def endpoint():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Recorder.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.mark.slow
def test_a_backend_url_in_the_manifest_is_not_contacted(index: Path, tmp_path: Path, endpoint: str) -> None:
    plant(index, generate={"enabled": True, "backend": endpoint})
    done = glassrag("ask", "What does E-4107 mean?", "--index", str(index), cwd=tmp_path)
    assert Recorder.seen == []  # nothing was sent
    assert done.returncode == 2, done.stderr
    assert f'generate.backend = "{endpoint}" comes from the index' in done.stderr
    assert "--generator URL" in done.stderr
    # named by the user, the same endpoint is contacted
    done = glassrag("ask", "What does E-4107 mean?", "--index", str(index), "--generator", endpoint,
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(Recorder.seen) == 1 and b"E-4107" in Recorder.seen[0]


def test_an_index_never_stores_the_backend(index: Path, tmp_path: Path, corpus: Path) -> None:
    config = tmp_path / "mine.toml"
    config.write_text('[generate]\nbackend = "http://127.0.0.1:9/v1"\n')
    again = tmp_path / "again"
    assert main(["ingest", str(corpus), "--index", str(again), "--config", str(config)]) == 0
    manifest = json.loads((live_generation(again) / "manifest.json").read_text(encoding="utf-8"))
    assert "backend" not in manifest["config"].get("generate", {})
