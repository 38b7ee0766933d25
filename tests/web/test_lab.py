"""The lab's pages in process: every exhibit and its JSON twin, its numbers equal to what
`glassrag eval` (evaluate()) and `glassrag sweep` give for the same settings, and bad
parameters answered with a 400 that says what was expected."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from glassrag.chunk import make_chunker
from glassrag.chunk.theory import chunk_count
from glassrag.chunk.units import count_units
from glassrag.config import Config
from glassrag.demo import demo_golden
from glassrag.evaluate.golden import load_golden
from glassrag.evaluate.runs import evaluate
from glassrag.indexer import build_index
from glassrag.lab import EXHIBITS
from glassrag.lab.base import LabBench
from glassrag.lab.fusion import config_for
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from glassrag.web.guard import CSP


@pytest.fixture(scope="module")
def index(demo_index: Path):
    return EmbeddedStore(demo_index).read()


def test_the_lab_lists_its_exhibits_and_every_page_links_its_twin(client):
    home = client.get("/lab")
    assert home.status_code == 200 and 'href="/lab.json?' in home.text
    assert 'href="/lab?index=' in client.get("/ask").text  # the header's nav
    listed = client.get("/lab.json").json()
    assert [e["name"] for e in listed["exhibits"]] == list(EXHIBITS)
    # the golden set by its file name: the page does not show the server's folders (issue 49, item 7)
    assert "<code>golden.jsonl</code>" in home.text and str(demo_golden().parent) not in home.text
    assert listed["questions"] == len(load_golden(demo_golden()))
    for name in EXHIBITS:
        page = client.get(f"/lab/{name}")
        assert page.status_code == 200, (name, page.text[:300])
        assert f'href="/lab/{name}.json?' in page.text
        assert 'src="/static/lab.js"' in page.text
        twin = client.get(f"/lab/{name}.json")
        assert twin.status_code == 200 and twin.json()["exhibit"] == name


# exhibit 1 -----------------------------------------------------------------------------------

def test_cuts_at_the_index_settings_are_the_index_chunks_and_its_answer_intact(client, token, index, demo_index: Path):
    own = index.config.chunk
    data = client.get("/lab/cuts.json", params={"chunker": own.chunker, "unit": own.unit, "size": own.size,
                                                "overlap": own.overlap, "split": "test",
                                                "token": token}).json()
    assert data["measured"]["chunks"] == len(index.chunks)
    run = json.loads((demo_index / "runs" / "defaults-test.json").read_text())  # glassrag eval on test
    assert data["measured"]["intact"] == run["ranking"]["metrics"]["answer_intact"]["value"]
    assert data["measured"]["questions"] == run["ranking"]["metrics"]["answer_intact"]["n"]


def test_fixed_windows_meet_the_closed_form_count(client, token, index):
    data = client.get("/lab/cuts.json", params={"chunker": "fixed", "size": 100, "overlap": 20,
                                                "token": token}).json()
    expected = sum(chunk_count(count_units(d.text, "words"), 100, 20) for d in index.documents.values())
    made = sum(len(make_chunker("fixed", size=100, overlap=20, unit="words").chunk(d))
               for d in index.documents.values())
    assert data["measured"]["chunks"] == made == expected == data["measured"]["predicted_chunks"]
    sizes = [p["size"] for p in data["curve"]]
    assert sizes == sorted(sizes) and 100 in sizes and all(s >= 40 for s in sizes)
    doc = data["document"]
    assert len(doc["chunks"]) == doc["predicted_chunks"]
    questions = data["questions"]
    assert {"id", "split", "kind", "question", "answer"} <= set(questions[0])
    assert len(questions) == len(load_golden(demo_golden()))


def test_a_larger_size_changes_the_count_shown(client, token):
    small = client.get(f"/lab/cuts?chunker=fixed&size=50&overlap=0&token={token}").text
    large = client.get(f"/lab/cuts.json?chunker=fixed&size=300&overlap=0&token={token}").json()
    assert f'id="n-chunks">{large["measured"]["chunks"]}<' not in small
    again = client.get(f"/lab/cuts?chunker=fixed&size=300&overlap=0&token={token}").text
    assert f'id="n-chunks">{large["measured"]["chunks"]}<' in again


# exhibit 2 -----------------------------------------------------------------------------------

def test_bm25_heat_map_cells_equal_the_sweep_runs(client, demo_index: Path):
    """sweeps/k1-b (tests/web/conftest.py: `glassrag sweep` over k1 0.9, 1.5 × b 0.4, 0.75, 0.9)
    saved one run per configuration; the lab's cell at each (k1, b) is that run's BM25 recall@5."""
    data = client.get("/lab/bm25.json").json()
    cells = {(c["k1"], c["b"]): c["value"] for c in data["grid"]["cells"]}
    sweep = json.loads((demo_index / "sweeps" / "k1-b" / "sweep.json").read_text())
    checked = 0
    for config in sweep["configs"]:
        run = json.loads((demo_index / "sweeps" / "k1-b" / config["run"]).read_text())
        s = config["settings"]
        assert cells[(s["bm25.k1"], s["bm25.b"])] == run["stages"]["bm25"]["recall@5"]["value"]
        checked += 1
    assert checked == 6


def test_bm25_test_recall_after_commit_equals_evaluate(client, token, index):
    shown = client.get(f"/lab/bm25.json?k1=1.2&b=0.75&token={token}").json()
    assert shown["test"] is None and not shown["committed"]
    committed = client.get(f"/lab/bm25.json?k1=1.2&b=0.75&commit=1&token={token}").json()
    config = index.config.with_overrides(bm25={"k1": 1.2, "b": 0.75})
    for split, value in (("test", committed["test"]), ("train", committed["train"])):
        run = evaluate(Pipeline(index, config), load_golden(demo_golden(), split, index.documents))
        assert value == run.to_dict(deep=False)["stages"]["bm25"]["recall@5"]["value"]
    page = client.get(f"/lab/bm25?k1=1.2&b=0.75&commit=1&token={token}").text
    assert f'id="test-recall">{committed["test"]:.3f}<' in page


def test_bm25_search_shows_each_word_and_the_parts_sum_to_the_score(client):
    data = client.get("/lab/bm25.json", params={"q": "What does error E-4107 mean?"}).json()
    top = data["search"]["hits"][0]
    assert "e-4107" in data["search"]["tokens"]
    assert sum(t["contribution"] for t in top["terms"]) == pytest.approx(top["score"], rel=1e-5)


# exhibit 4 -----------------------------------------------------------------------------------

@pytest.mark.parametrize("params", [{"method": "rrf", "k": 30}, {"method": "weighted", "w": 0.5}])
def test_fusion_metrics_equal_evaluate_on_the_test_split(client, token, index, demo_index: Path, params):
    data = client.get("/lab/fusion.json", params={**params, "token": token}).json()
    bench = LabBench("check", index, tuple(load_golden(demo_golden())), str(demo_golden()))
    config = config_for(bench, params["method"], params.get("k", 60), params.get("w", 0.7))
    run = evaluate(Pipeline(index, config), load_golden(demo_golden(), "test", index.documents)).to_dict(deep=False)
    rows = {r["stage"]: r["metrics"] for r in data["rows"]}
    assert set(rows) == {"bm25", "lsa", "fuse"}
    for stage in rows:
        for metric in ("recall@5", "mrr@10", "ndcg@10", "hit@1"):
            if metric in rows[stage]:
                assert rows[stage][metric] == pytest.approx(run["stages"][stage][metric]["value"], abs=1e-12)
        assert rows[stage]["recall@10"] >= rows[stage]["recall@5"] >= rows[stage]["recall@1"]
    assert len(data["squares"]) == data["questions"] == run["stages"]["fuse"]["recall@5"]["n"]


def test_picking_a_square_shows_the_three_lists(client):
    data = client.get("/lab/fusion.json").json()
    qid = data["squares"][0]["id"]
    picked = client.get("/lab/fusion.json", params={"pick": qid}).json()["picked"]
    assert picked["id"] == qid and set(picked["lists"]) == {"bm25", "lsa", "fuse"}
    assert all(1 <= len(v) <= 10 for v in picked["lists"].values())


# bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("url, words", [
    ("/lab/bm25.json?k1=x", "bm25.k1 = \"x\" in the lab's k1: must be a number from 0 to 100"),
    ("/lab/bm25.json?b=1.5", "must be a number from 0 to 1"),
    ("/lab/bm25.json?commit=yes", "commit"),
    ("/lab/cuts.json?size=100&overlap=51", "more than half of size"),
    ("/lab/cuts.json?size=1", "outside what this exhibit computes"),
    ("/lab/cuts.json?unit=chars&size=20", "from 50"),
    ("/lab/cuts.json?chunker=bogus", "fixed"),
    ("/lab/cuts.json?doc=nope", "not a document"),
    ("/lab/fusion.json?method=max", "rrf, weighted"),
    ("/lab/fusion.json?pick=zzz", "not a test question"),
    ("/lab/fusion.json?frobnicate=1", "unknown parameter"),
])
def test_a_bad_parameter_is_a_400_that_says_what_was_expected(client, url, words):
    r = client.get(url)
    assert r.status_code == 400, (url, r.status_code)
    body = r.json()
    assert words in body["error"] + " " + body["hint"], body


# security ------------------------------------------------------------------------------------

LAB_PAGES = ["/lab", *[f"/lab/{n}" for n in EXHIBITS], "/lab/bm25?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E",
             "/lab/fusion?pick=q002"]
OWN_SCRIPT = '<script src="/static/lab.js" defer></script>'


@pytest.mark.parametrize("path", LAB_PAGES)
def test_lab_pages_load_nothing_from_another_host_and_run_no_inline_code(client, path: str):
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-security-policy"] == CSP
    html = r.text
    for url in re.findall(r'(?:src|href|action)="([^"]*)"', html):
        assert url.startswith(("/", "#")) and not url.startswith("//"), url
    assert html.count("<script") == html.count(OWN_SCRIPT) == 1  # the app's own file, no inline code
    assert " style=" not in html and "<style" not in html
    assert not re.search(r"\son[a-z]+=", html)


def test_the_lab_script_is_served_by_the_app_and_sends_nothing(client):
    r = client.get("/static/lab.js")
    assert r.status_code == 200 and "javascript" in r.headers["content-type"]
    assert not re.search(r"fetch\(|XMLHttpRequest|sendBeacon|WebSocket|https?://", r.text)


def test_document_text_and_questions_are_escaped_in_the_lab(tmp_path: Path, make_client):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "release.md").write_text("# Release <script>alert(1)</script>\n\nThe <img src=x onerror=alert(2)> "
                                     "installer runs on every laptop.\n", encoding="utf-8")
    index, _ = build_index([docs], Config().with_overrides(lsa={"dim": 2}))
    EmbeddedStore(tmp_path / "idx").write(index)
    client = make_client(tmp_path / "idx")
    html = client.get("/lab/cuts").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<img" not in html
    assert html.count("<script") == 1
    needs = client.get("/lab/bm25.json")  # no labelled questions: said, not a 500
    assert needs.status_code == 400 and "no labelled questions" in needs.json()["error"]


def test_the_lab_takes_a_setting_s_whole_range_as_the_settings_form_does(client, token):
    """The lab parses k1 through the setting's one definition (issue 29.3): k1 = 20 is a valid
    bm25.k1 (0 to 100), so the exhibit measures it instead of refusing what a --config file takes."""
    r = client.get(f"/lab/bm25.json?k1=20&b=0.4&token={token}")
    assert r.status_code == 200, r.text
    assert r.json()["k1"] == 20.0
