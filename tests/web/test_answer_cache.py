"""The ask page is computed once per answer (issue 30): its JSON twin is kept per index
generation, settings and question, is what the uncached page gave, and is dropped when the
index changes; the JSON encoder writes the C encoder's output and cleans only non-finite numbers."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from starlette.testclient import TestClient

from glassrag.indexer import build_index
from glassrag.store import EmbeddedStore
from glassrag.web import encode as encode_module
from glassrag.web.ask import AskView
from glassrag.web.cache import AnswerCache
from glassrag.web.catalog import Source
from glassrag.web.encode import _clean, encode
from glassrag.web.server import create_app
from tests.conftest import HANDBOOK, write_corpus

BASE_URL = "http://127.0.0.1"
QUESTION = "What does error E-4107 mean?"


def without_times(value):
    """The data without what measures time (a stage's ms differs from one computation to the next)."""
    if isinstance(value, dict):
        return {k: (None if k == "ms" else without_times(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [without_times(v) for v in value]
    return value


def old_encoding(data) -> dict:
    """The twin as pages.py wrote it before issue 30: `_clean`, then json.dumps with an indent."""
    return json.loads(json.dumps(_clean(data), ensure_ascii=False, indent=1, default=str))


@pytest.fixture
def demo_client(demo_index: Path) -> TestClient:
    """A new app (an empty answer cache) over the demo index."""
    return TestClient(create_app([demo_index]), base_url=BASE_URL)


def test_the_twin_is_what_the_uncached_page_gave_and_a_second_ask_is_the_same_bytes(
        demo_client: TestClient, demo_index: Path, monkeypatch):
    first = demo_client.get("/ask.json", params={"q": QUESTION})
    assert first.status_code == 200 and first.headers["content-type"].startswith("application/json")
    source = demo_client.app.state.catalog.get(None)
    fresh = AskView(source, {"q": QUESTION, "generate.enabled": "false"}).compute()
    assert without_times(first.json()) == without_times(old_encoding(fresh))
    assert first.json()["answer"]["citation"]  # a real answer, not an empty page
    assert len(source.answers) == 1

    def computed_again(self):
        raise AssertionError("a kept answer was computed again")

    monkeypatch.setattr(AskView, "_asked", computed_again)  # the question's part: what a kept answer skips
    second = demo_client.get("/ask.json", params={"q": QUESTION})
    assert second.content == first.content
    page = demo_client.get("/ask", params={"q": QUESTION})  # the HTML page is drawn from the same twin
    assert page.status_code == 200
    assert first.json()["answer"]["passage"]["title"] in page.text
    assert source.answers.hits == 2 and source.answers.misses == 1


def test_other_settings_or_another_question_are_computed_and_kept_apart(demo_client: TestClient):
    source = demo_client.app.state.catalog.get(None)
    plain = demo_client.get("/ask.json", params={"q": QUESTION}).json()
    other = demo_client.get("/ask.json", params={"q": QUESTION, "bm25.k1": "0.6"}).json()
    spaced = demo_client.get("/ask.json", params={"q": QUESTION + " "}).json()  # the same question, stripped
    assert other["settings"]["changed"] == {"bm25.k1": "0.6"} and plain["settings"]["changed"] == {}
    def k1(data: dict) -> float:
        return next(t for t in data["answer"]["trace"] if t["name"] == "bm25")["params"]["k1"]

    assert k1(other) == 0.6 != k1(plain)
    assert without_times(spaced) == without_times(plain)
    assert len(source.answers) == 2 and source.answers.misses == 2 and source.answers.hits == 1


def test_a_saved_run_is_read_anew_while_the_answer_is_kept(demo_client: TestClient, demo_index: Path):
    source = demo_client.app.state.catalog.get(None)
    alone = demo_client.get("/ask.json", params={"q": QUESTION}).json()
    with_run = demo_client.get("/ask.json", params={"q": QUESTION, "run": "defaults-test"}).json()
    assert alone["run"] is None and with_run["run"]["name"] == "defaults-test"
    assert without_times({**with_run, "run": None}) == without_times(alone)
    assert source.answers.misses == 1 and len(source.answers) == 1  # one answer, kept without its run


def test_a_new_generation_of_the_index_drops_the_kept_answers_and_labels(index, tmp_path: Path):
    folder = tmp_path / "idx"
    EmbeddedStore(folder).write(index)
    source = Source("idx", folder)
    question = {"q": "What does E-4107 mean?", "generate.enabled": "false"}
    before = json.loads(AskView(source, question).body())
    assert "tilt sensor" in before["answer"]["passage"]["text"]
    old = source.live()
    assert len(source.answers) == 1 and old.label(before["answer"]["passage"]["chunk_id"]) is \
        old.label(before["answer"]["passage"]["chunk_id"])  # kept
    changed = {**HANDBOOK, "manual.md": HANDBOOK["manual.md"].replace("tilt sensor", "level vial")}
    rebuilt, report = build_index([write_corpus(tmp_path / "docs2", changed)], index.config)
    assert not report.failed
    EmbeddedStore(folder).write(rebuilt)
    after = json.loads(AskView(source, question).body())
    assert source.live().generation != old.generation and source.live().label is not old.label
    assert "level vial" in after["answer"]["passage"]["text"] and "tilt sensor" not in after["answer"]["passage"]["text"]
    assert len(source.answers) == 1 and source.answers.misses == 2


def test_an_answer_of_a_generation_no_longer_live_is_not_kept():
    cache = AnswerCache()
    cache.live("gen-1")
    cache.put("gen-1", "s", "q", b"{}")
    cache.live("gen-2")  # the index changed while an answer of gen-1 was being computed
    assert len(cache) == 0 and cache.get("gen-1", "s", "q") is None
    cache.put("gen-1", "s", "q2", b"{}")
    assert len(cache) == 0
    cache.put("gen-2", "s", "q", b"{}")
    assert cache.get("gen-2", "s", "q") == b"{}" and cache.get("gen-1", "s", "q") is None


def test_the_cache_keeps_what_fits_in_its_budget_dropping_the_least_recently_used():
    cache = AnswerCache(budget_mb=250 / 2**20)  # 250 bytes
    cache.live("g")
    for name in ("a", "b"):
        cache.put("g", "s", name, b"x" * 100)
    assert cache.get("g", "s", "a") is not None  # a is now the more recently used
    cache.put("g", "s", "c", b"x" * 100)  # 300 > 250: b goes
    assert cache.get("g", "s", "b") is None and cache.get("g", "s", "a") and cache.get("g", "s", "c")
    assert cache.size == 200
    cache.put("g", "s", "a", b"y" * 50)  # replaced: its size counted once
    assert cache.size == 150
    cache.put("g", "s", "huge", b"x" * 251)  # larger than the whole budget: not kept
    assert cache.get("g", "s", "huge") is None and cache.size == 150


def test_a_generated_answer_is_never_kept(index, tmp_path: Path):
    EmbeddedStore(tmp_path / "idx").write(index)
    source = Source("idx", tmp_path / "idx")
    view = AskView(source, {"q": "What does E-4107 mean?", "generate.enabled": "false"})
    view.config = view.config.updated({"generate": {"enabled": True}}, "the Generate button", "flag")
    assert view.config.generate.enabled
    view._asked = lambda: {"answer": "generated"}  # type: ignore[method-assign]
    got = json.loads(view.body())
    assert got["answer"] == "generated" and got["index"] == "idx"  # the question's part and the kept frame
    assert len(source.answers) == 0


def test_the_encoder_writes_numpy_values_as_numbers_and_non_finite_ones_as_null(monkeypatch):
    assert json.loads(encode({"a": np.float32(0.5), "b": np.int64(3), "c": np.arange(2), "d": (1, "é")})) == \
        {"a": 0.5, "b": 3, "c": [0, 1], "d": [1, "é"]}
    assert encode({"x": "é"}) == '{"x":"é"}'.encode("utf-8")  # UTF-8, not \\u escapes
    assert json.loads(encode({"n": math.nan, "i": [np.float64(math.inf)], 1: -math.inf})) == \
        {"n": None, "i": [None], "1": None}

    def cleaned(value):
        raise AssertionError("data without a non-finite number went through _clean")

    monkeypatch.setattr(encode_module, "_clean", cleaned)
    assert json.loads(encode({"scores": [1.5, 2], "nested": {"k": [{"v": None}]}})) == \
        {"scores": [1.5, 2], "nested": {"k": [{"v": None}]}}


def test_an_ask_page_is_encoded_without_the_clean_up_pass(demo_client: TestClient, monkeypatch):
    def cleaned(value):
        raise AssertionError("the ask page went through _clean")

    monkeypatch.setattr(encode_module, "_clean", cleaned)
    assert demo_client.get("/ask.json", params={"q": "How do I reset the TX-200?"}).status_code == 200
    assert demo_client.get("/ask.json", params={"q": "E-4100" + " TX-2000 E-4107" * 250}).status_code == 200


def test_the_frame_every_question_shares_is_made_once_per_settings_and_generation(index, tmp_path: Path,
                                                                                   monkeypatch):
    """The index, settings form and example questions are encoded once per (generation, settings)
    and joined to each question's part: the twin is the same JSON as the whole page's data."""
    EmbeddedStore(tmp_path / "idx").write(index)
    source = Source("idx", tmp_path / "idx")
    made = []
    frame = AskView._frame
    monkeypatch.setattr(AskView, "_frame", lambda self: made.append(self.config.key()) or frame(self))
    plain = {"generate.enabled": "false"}
    first = AskView(source, {**plain, "q": "What does E-4107 mean?"})
    assert without_times(json.loads(first.body())) == without_times(json.loads(encode(first.compute())))
    AskView(source, {**plain, "q": "quiet hours"}).body()
    assert len(made) == 2  # compute() above made its own; the second question's twin reused the kept frame
    other = AskView(source, {**plain, "q": "quiet hours", "bm25.k1": "0.6"})
    assert json.loads(other.body())["settings"]["changed"]  # another setting: its own frame
    assert len(made) == 3 and made[2] != made[0]
    source.answers.live("another generation")
    assert source.answers.frame(first.generation, first.config.key()) is None
