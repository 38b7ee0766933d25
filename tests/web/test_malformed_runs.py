"""Malformed run files (issue 28, item 4): a run whose nested fields have the wrong shape is
refused by `Run.from_dict` with the path of the field, and every page that reads runs shows
the file as unreadable instead of answering 500, the good runs still shown."""

from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glassrag.errors import RunFileError
from glassrag.schema import Run

# hand-picked from the audit: each broke /analytics, /runs/NAME or /ask?run= with a 500
AUDIT = [
    ("questions", 0, "stages", "bm25", "not an object"),
    ("questions", 0, "stages", "bm25", "first_relevant_rank", "3"),
    ("stages", "bm25", "hit@5", "low", "0.1"),
    ("losses", "not retrieved", [["a list as an id"]]),
    ("questions", 0, "cause", ["a", "list"]),
    ("questions", 0, "ranking", [["chunk", "document"]]),  # a row without its score
    ("generation", "a string"),
    ("generation", {"stage": "generate", "metrics": {"cited": 3}}),
    ("created", 20261201),
    ("golden", "path", 7),
    ("by_kind", "fact", "declined", {"value": "high", "n": 1}),
]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner, max_size=2),
    max_leaves=4)


def set_path(data: Any, path: tuple[Any, ...]) -> Any:
    """A deep copy of `data` with the value at `path[:-1]` replaced by `path[-1]`."""
    out = json.loads(json.dumps(data))
    node = out
    for key in path[:-2]:
        node = node[key]
    node[path[-2]] = path[-1]
    return out


@st.composite
def malformed(draw: st.DrawFn, run: dict[str, Any]) -> tuple[Any, ...]:
    """A path into the run (to any depth) and a value of another JSON type put there."""
    node: Any = run
    path: list[Any] = []
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
        if not keys or (path and draw(st.booleans())):
            break
        key = draw(st.sampled_from(keys))
        path.append(key)
        node = node[key]
    if not path:
        path = ["questions"]
        node = run["questions"]
    value = draw(JSON_VALUES.filter(lambda v: type(v) is not type(node)))
    return (*path, value)


def pages(name: str, question: str) -> list[str]:
    return ["/analytics", "/analytics.json", f"/analytics?run={name}", f"/runs/{name}", f"/runs/{name}.json",
            f"/ask?q={question}&run={name}", f"/ask.json?q={question}&run={name}"]


def check_pages(client: Any, name: str, question: str) -> None:
    for page in pages(name, question):
        r = client.get(page)
        assert r.status_code != 500, (page, r.text[-2000:])
    listed = {r["name"]: r for r in client.get("/analytics.json").json()["runs"]}
    assert listed["defaults-test"]["problem"] == ""  # the others are still shown


@pytest.fixture(scope="module")
def fuzzed(demo_index: Path, tmp_path_factory: pytest.TempPathFactory, make_client) -> tuple[Path, Any]:
    """A copy of the demo index and one client over it for every generated run."""
    folder = tmp_path_factory.mktemp("fuzz") / "demo"
    shutil.copytree(demo_index, folder)
    return folder, make_client(folder)


@pytest.fixture(scope="module")
def good_run(demo_index: Path) -> dict[str, Any]:
    return json.loads((demo_index / "runs" / "defaults-test.json").read_text())


def test_the_saved_runs_fit_the_whole_shape(good_run: dict[str, Any]):
    Run.from_dict(good_run)


@pytest.mark.parametrize("path", AUDIT, ids=lambda p: ".".join(map(str, p[:-1])))
def test_each_audited_variant_is_refused_and_shown_as_unreadable(path: tuple[Any, ...], good_run: dict[str, Any],
                                                                 index_copy: Path, make_client):
    if path[0] == "questions":
        stage = next(iter(good_run["questions"][0]["stages"]))
        path = tuple(stage if p == "bm25" else p for p in path)
    if path[0] == "stages":
        path = (path[0], next(iter(good_run["stages"])), *path[2:])
    if path[0] == "losses":
        path = ("losses", next(iter(good_run["losses"])), path[-1])
    if path[0] == "by_kind":
        path = ("by_kind", next(iter(good_run["by_kind"])), *path[2:])
    bad = set_path(good_run, path)
    with pytest.raises(RunFileError) as err:
        Run.from_dict(bad, "runs/bad.json")
    assert "should be" in err.value.problem or "missing" in err.value.problem
    (index_copy / "runs" / "bad.json").write_text(json.dumps(bad))
    client = make_client(index_copy)
    check_pages(client, "bad", good_run["questions"][0]["question"])
    listed = {r["name"]: r for r in client.get("/analytics.json").json()["runs"]}
    assert listed["bad"]["problem"]  # reported


_names = itertools.count()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_malformed_run_gives_a_500(data: st.DataObject, good_run: dict[str, Any], fuzzed: tuple[Path, Any]):
    bad = set_path(good_run, data.draw(malformed(good_run)))
    try:
        Run.from_dict(bad, "runs/x.json")
    except RunFileError:
        pass  # refused with a message: the only other outcome allowed
    name = f"bad-{next(_names)}"
    folder, client = fuzzed
    target = folder / "runs" / f"{name}.json"
    target.write_text(json.dumps(bad))
    try:
        check_pages(client, name, "What is the probation period?")
    finally:
        target.unlink()
