"""Every page and its JSON twin, in process: what they show is what the pipeline, the run
files and the index hold."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import numpy as np
import pytest
from starlette.testclient import TestClient

from glassrag.demo import SHOWCASE, demo_golden
from glassrag.evaluate.golden import load_golden
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore
from glassrag.web.glossary import TERMS, anchor
from glassrag.web.server import create_app
from tests.web.conftest import BASE_URL

# the demo's showcase: an error code whose near-twin belongs to another product, and a
# question the handbook cannot answer, which the calibrated gate declines
QUESTIONS = {q.id: q for q in load_golden(demo_golden())}
E4107 = QUESTIONS[SHOWCASE[0]].question
GYM = QUESTIONS[SHOWCASE[2]].question


def ask(client: TestClient, question: str, **settings: str) -> dict:
    r = client.get("/ask.json?" + urlencode({"q": question, **settings}))
    assert r.status_code == 200, r.text
    return r.json()


def text_of(html: str) -> str:
    """The page's visible text, tags removed and entities decoded."""
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


# ask ---------------------------------------------------------------------------------------

def test_ask_json_is_the_pipelines_answer(client: TestClient, demo_index: Path):
    assert "E-4107" in E4107 and not QUESTIONS[SHOWCASE[2]].answerable
    data = ask(client, E4107)
    index = EmbeddedStore(demo_index).read()
    expected = Pipeline(index, index.config).run(E4107)
    got = data["answer"]
    assert got["passage"]["chunk_id"] == expected.passage.chunk_id
    assert got["citation"] == expected.passage.citation
    assert [p["chunk_id"] for p in got["also_found"]] == [p.chunk_id for p in expected.also_found]
    assert [t["name"] for t in got["trace"]] == [t.name for t in expected.trace]
    for mine, theirs in zip(got["trace"], expected.trace):
        assert [h["chunk_id"] for h in mine["hits"]] == [h.chunk_id for h in theirs.hits]
        assert [h["score"] for h in mine["hits"]] == pytest.approx([h.score for h in theirs.hits])
    run = json.loads((demo_index / "runs" / "defaults-test.json").read_text())
    record = next(r for r in run["questions"] if r["id"] == SHOWCASE[0])
    assert data["golden"]["id"] == SHOWCASE[0] and data["golden"]["cause"] == record["cause"]


def test_ask_page_shows_excerpt_citation_score_and_route(client: TestClient):
    data = ask(client, E4107)
    r = client.get("/ask?" + urlencode({"q": E4107}))
    assert r.status_code == 200
    html, p = r.text, data["answer"]["passage"]
    page = text_of(html)
    assert p["title"] in page and p["locator"] in page
    # the answer words are bold, exactly at the highlight offsets
    for a, b in p["highlights"]:
        assert f"<strong>{p['excerpt'][a:b]}" in unescape(html)
    # auto leaves the demo's reranker out (its cross-validation shows no help), and says why
    assert "BM25 match strength" in page and "Not a probability" in page
    assert "rerank auto: not using the trained learned reranker: by 5-fold cross-validation on train" in page
    assert "Also found" in page and "Reader" in page
    assert "numbered by its rank" in page  # issue 27: "also found" read 2, 4, 3, 5 unexplained
    # the route: a column per ranking stage, with its name, rank rows and joining lines
    assert '<svg class="route"' in html
    drawn = [c["name"] for c in data["route"]["columns"]]
    trace = data["answer"]["trace"]
    observed = [t["name"] for t in trace if t["kind"] == "observe"]
    assert drawn == observed + [t["name"] for t in trace if t["kind"] not in ("observe", "analyze", "read")]
    assert drawn[:2] == ["lsa", "bm25"]  # the demo's defaults: LSA observed beside BM25
    for name in drawn:
        assert re.search(rf'<text class="colname"[^>]*>{name}( · observed)?</text>', html)
    assert html.count('class="edge solid"') >= 5 * 7 - 10
    labelled = [c for c in data["route"]["chunks"] if c["relevant"]]
    assert labelled
    ranks = {t["name"]: {h["chunk_id"]: h["rank"] for h in t["hits"]} for t in trace}
    for chunk in labelled:
        for node in chunk["nodes"]:
            assert node["rank"] == ranks[node["column"]][chunk["chunk_id"]]


def test_route_lines_join_the_same_chunk_in_consecutive_stages(client: TestClient):
    route = ask(client, E4107)["route"]
    columns = {c["name"]: c for c in route["columns"]}
    for chunk in route["chunks"]:
        at = {n["column"]: n for n in chunk["nodes"]}
        for edge in chunk["edges"]:
            start = re.match(r"M([\d.]+),([\d.]+)", edge["d"])
            assert start and edge["from"] in at
            assert float(start.group(1)) == pytest.approx(at[edge["from"]]["x"] + route["column_width"], abs=0.1)
            end = re.search(r" ([\d.]+),([\d.]+)$", edge["d"])
            if edge["kind"] == "sink":
                assert float(end.group(2)) == pytest.approx(columns[edge["to"]]["sink"]["y"], abs=0.1)
            elif edge["to"] in at:
                assert float(end.group(2)) == pytest.approx(at[edge["to"]]["y"] + (route["row"] - 4) / 2, abs=0.1)


def test_unanswerable_question_is_declined_with_nearest_passages(client: TestClient):
    data = ask(client, GYM)
    assert data["answer"]["declined"] and data["answer"]["passage"] is None
    assert data["golden"]["answerable"] is False and data["golden"]["verdict"] == "rightly declined"
    page = text_of(client.get("/ask?" + urlencode({"q": GYM})).text)
    assert "No answer" in page and data["answer"]["reason"] in page
    assert "Nearest passages — not answers" in page
    gate = next(c for c in data["route"]["columns"] if c["name"] == "gate")
    assert gate["n_out"] == 0 and gate["banner"].startswith("declined")


def test_examples_come_from_the_golden_set_with_unanswerable_marked(client: TestClient, golden_by_id: dict):
    data = client.get("/ask.json").json()
    listed = {q["id"]: q for g in data["examples"] for q in g["questions"]}
    assert listed.keys() == golden_by_id.keys()
    html = client.get("/ask").text
    assert '<optgroup label="unanswerable: the gate should decline">' in html
    unanswerable = [q for q in golden_by_id.values() if not q.answerable]
    assert html.count("(unanswerable)</option>") == len(unanswerable)


def test_settings_change_the_run_and_are_kept_in_the_form(client: TestClient):
    gated = ask(client, GYM)
    open_gate = ask(client, GYM, **{"gate.enabled": "false"})
    assert gated["answer"]["declined"] and not open_gate["answer"]["declined"]
    assert open_gate["settings"]["changed"] == {"gate.enabled": "false"}
    fused = ask(client, E4107, **{"role.lsa": "fused", "fuse.method": "rrf", "rerank.method": "none"})
    names = [t["name"] for t in fused["answer"]["trace"]]
    assert "fuse" in names and "rerank" not in names
    assert fused["answer"]["trace"][names.index("fuse")]["params"]["method"] == "rrf"
    html = client.get("/ask?" + urlencode({"q": E4107, "bm25.k1": "0.9"})).text
    assert re.search(r'<label class="field changed"[^>]*>\s*<span>k1</span>\s*<input name="bm25.k1" value="0.9"', html)
    assert "bm25" in fused["score"]["stage"] or fused["score"]["term"] in ("fusion", "RRF")


def test_bm25_contributions_add_up_to_the_bm25_score(client: TestClient):
    data = ask(client, E4107)
    table = data["bm25_terms"]
    assert table["terms"][:2] == ["error", "e-4107"]
    for row in table["rows"]:
        assert row["total"] == pytest.approx(row["score"], rel=1e-5)
        assert sum(c["contribution"] for c in row["cells"]) == pytest.approx(row["score"], rel=1e-5)
    html = client.get("/ask?" + urlencode({"q": E4107})).text
    assert "BM25 per term: " in html  # on hover, in each bm25 row's <title>


def test_score_explanations_say_what_the_score_is_not(client: TestClient):
    learned = ask(client, E4107, **{"rerank.method": "learned"})["score"]
    assert learned["stage"] == "rerank" and "probability" in learned["text"] and "not a guarantee" in learned["text"]
    plain = ask(client, E4107, **{"rerank.method": "none"})["score"]
    assert plain["stage"] == "bm25" and "Not a probability" in plain["text"]
    # auto leaves the demo's reranker out (its cross-validation on train shows no help): BM25's score
    assert ask(client, E4107)["score"] == plain
    rrf = ask(client, E4107, **{"rerank.method": "none", "role.lsa": "fused", "fuse.method": "rrf"})["score"]
    assert rrf["term"] == "RRF" and "ranks only" in rrf["text"]


# analytics ---------------------------------------------------------------------------------

def test_analytics_numbers_are_the_run_files(client: TestClient, demo_index: Path):
    data = client.get("/analytics.json").json()
    runs = {n: json.loads((demo_index / "runs" / f"{n}.json").read_text()) for n in ("defaults-test", "plain-test")}
    assert [r["name"] for r in data["runs"]] == ["defaults-test", "plain-test"]
    assert data["selected"] == "defaults-test"
    shown = {row["metric"] for row in data["metrics"]["rows"]}
    assert {"answer hit@5", "ranking hit@5", "answer declined_answerable", "ranking mrr@10"} <= shown
    for row in data["metrics"]["rows"]:
        section, name = row["metric"].split(" ")
        for cell in row["cells"]:
            recorded = runs[cell["run"]][section]["metrics"].get(name)
            if recorded is None:
                assert cell["metric"] is None
            else:
                assert {k: cell["metric"][k] for k in ("value", "low", "high", "n")} == recorded
    hit = next(r for r in data["metrics"]["rows"] if r["metric"] == "answer hit@5")
    versus = hit["cells"][1]["versus"]
    assert versus["test"] == "McNemar exact" and versus["diff"] == pytest.approx(
        runs["plain-test"]["answer"]["metrics"]["hit@5"]["value"]
        - runs["defaults-test"]["answer"]["metrics"]["hit@5"]["value"])
    declined = next(r for r in data["metrics"]["rows"] if r["metric"] == "answer declined_answerable")
    versus = declined["cells"][1]["versus"]
    assert versus["better"] == "lower"
    assert versus["verdict"] == ("better" if versus["diff"] < 0 else "worse" if versus["diff"] > 0 else "same")
    assert {c["cause"]: [q["id"] for q in c["questions"]] for c in data["losses"]["causes"]} == \
        runs["defaults-test"]["losses"]
    records = {q["id"]: q for q in runs["defaults-test"]["questions"]}
    for row in data["grid"]["rows"]:
        for cell in row["cells"]:
            assert cell["rank"] == records[row["id"]]["stages"].get(cell["stage"], {}).get("first_relevant_rank")
    gate = EmbeddedStore(demo_index).read().extra["gate"]
    assert data["gate"]["threshold"] == gate["threshold"] and data["gate"]["points"] == len(gate["sweep"])
    # the observed LSA stage's own figures: did it return anything, how similar its best passage
    table = data["stage_table"]
    assert table["names"][-2:] == ["vector_hit", "mean_top_similarity"]
    lsa = next(r for r in table["rows"] if r["stage"] == "lsa")["cells"]
    assert lsa[-1]["value"] == runs["defaults-test"]["stages"]["lsa"]["mean_top_similarity"]["value"]
    html = client.get("/analytics").text
    assert 'href="/runs/defaults-test.json?index=demo"' in html and 'href="/runs/plain-test.json?index=demo"' in html
    assert '<svg class="sweep"' in html and html.count('class="series ') >= 6


def test_an_edited_run_file_changes_the_page(index_copy: Path, make_client):
    """Nothing is typed into a template: change a number in a run file and the page follows."""
    path = index_copy / "runs" / "defaults-test.json"
    run = json.loads(path.read_text())
    run["answer"]["metrics"]["hit@5"].update(value=0.4321, low=0.1234, high=0.8765)
    (index_copy / "runs" / "edited.json").write_text(json.dumps(run))
    client = make_client(index_copy)
    page = text_of(client.get("/analytics").text)
    assert "0.432 [0.12, 0.88]" in page
    (index_copy / "runs" / "broken.json").write_text("{not json")
    data = client.get("/analytics.json").json()
    broken = next(r for r in data["runs"] if r["name"] == "broken")
    assert broken["problem"].startswith("not JSON")
    assert "cannot be read: not JSON" in text_of(client.get("/analytics").text)
    page = client.get("/runs/broken")
    assert page.status_code == 200 and "cannot be read: not JSON" in text_of(page.text)


def test_loss_table_links_lead_to_the_route_with_its_cause(client: TestClient):
    """Analytics → a lost question → its route: the user's path, in two requests."""
    html = client.get("/analytics").text
    table = html[html.index('<table class="losses">'):]
    links = re.findall(r'<a href="(/ask\?[^"]+)"><span class="qid">(q\d+)</span>', table)
    assert links
    data = client.get("/analytics.json").json()
    cause_of = {q["id"]: c["cause"] for c in data["losses"]["causes"] for q in c["questions"]}
    for href, qid in links[:4]:
        url = unescape(href)
        assert parse_qs(urlsplit(url).query)["run"] == ["defaults-test"]
        page = client.get(url)
        assert page.status_code == 200
        assert f"question {qid}:" in text_of(page.text)
        assert f"answer lost: {cause_of[qid]}" in text_of(page.text) or cause_of[qid] == "answered unanswerable"
        assert '<svg class="route"' in page.text
        twin = client.get(url.replace("/ask?", "/ask.json?")).json()
        assert twin["run"]["record"]["cause"] == cause_of[qid]


def test_links_from_a_run_reproduce_its_settings(client: TestClient):
    data = client.get("/analytics.json?run=plain-test").json()
    link = data["losses"]["causes"][0]["questions"][0]["link"]
    params = parse_qs(urlsplit(link).query)
    assert params["rerank.method"] == ["none"] and params["gate.enabled"] == ["false"]
    twin = client.get(link.replace("/ask?", "/ask.json?")).json()
    assert twin["run"]["same_settings"] is True


def test_run_json_is_the_file_byte_for_byte(client: TestClient, demo_index: Path):
    r = client.get("/runs/defaults-test.json")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert r.content == (demo_index / "runs" / "defaults-test.json").read_bytes()
    page = client.get("/runs/defaults-test")
    assert page.status_code == 200 and "Run defaults-test" in page.text
    assert '<table class="losses">' in page.text and "plain-test.json" not in page.text


# documents ---------------------------------------------------------------------------------

def test_documents_list_formats_sections_and_chunks(client: TestClient, demo_index: Path):
    index = EmbeddedStore(demo_index).read()
    data = client.get("/documents.json").json()
    assert len(data["documents"]) == len(index.documents) > 10
    assert sum(d["chunks"] for d in data["documents"]) == len(index.chunks)
    faq = next(d for d in data["documents"] if d["id"] == "faq")
    assert faq["format"] == "markdown" and faq["sections"] == len(index.documents["faq"].sections)
    quality = index.extra.get("quality") or {}
    assert all(d["quality"] == quality.get(d["id"]) for d in data["documents"])
    html = client.get("/documents").text
    assert 'href="/documents/faq?index=demo"' in html


def test_chunk_viewer_holds_the_whole_text_and_marks_every_cut(client: TestClient, demo_index: Path):
    index = EmbeddedStore(demo_index).read()
    doc = index.documents["manual-tx200"]
    data = client.get("/documents/manual-tx200.json").json()
    pieces = data["viewer"]
    assert "".join(p["text"] for p in pieces if "text" in p) == doc.text
    chunks = [c for c in index.chunks if c.doc_id == doc.id]
    starts = [p["id"] for p in pieces if p.get("cut") == "start"]
    assert sorted(starts) == sorted(c.id for c in chunks)
    for c in data["chunks"]:
        assert doc.text[c["start"]:c["end"]] == index.chunk(c["id"]).text
    html = client.get("/documents/manual-tx200").text
    for c in chunks:
        assert f'id="chunk-{c.id}"' in html  # the route's nodes link here


def test_quality_verdicts_are_shown_when_the_index_has_them(index_copy: Path, make_client):
    store = EmbeddedStore(index_copy)
    index = store.read()
    index.extra["quality"] = {"faq": {"verdict": "warn", "reasons": ["3 lines look like page furniture"]}}
    store.write(index)
    client = make_client(index_copy)
    listing = client.get("/documents.json").json()
    assert next(d for d in listing["documents"] if d["id"] == "faq")["quality"]["verdict"] == "warn"
    page = text_of(client.get("/documents").text)
    assert "warn 3 lines look like page furniture" in page
    assert "3 lines look like page furniture" in text_of(client.get("/documents/faq").text)


# glossary and twins ----------------------------------------------------------------------

REQUIRED_TERMS = ("chunk", "locator", "BM25", "dense", "LSA", "observed retriever", "fusion", "RRF",
                  "cross-encoder", "learned reranker", "MMR", "cap", "gate", "any-hit", "answer-visible",
                  "source recall", "MRR", "nDCG", "Wilson interval", "McNemar")


def test_glossary_defines_every_term_and_every_link_lands(client: TestClient):
    data = client.get("/glossary.json").json()
    terms = {t["term"]: t for t in data["terms"]}
    assert set(REQUIRED_TERMS) <= set(terms) and set(terms) == set(TERMS)
    html = client.get("/glossary").text
    anchors = set(re.findall(r'id="([^"]+)"', html))
    assert {anchor(t) for t in REQUIRED_TERMS} <= anchors
    linked = set()
    for page in ("/ask?" + urlencode({"q": E4107}), "/analytics", "/documents", "/documents/faq"):
        linked |= set(re.findall(r'href="/glossary#([^"]+)"', client.get(page).text))
    assert linked <= anchors
    assert {anchor(t) for t in REQUIRED_TERMS} <= linked  # every term is linked from where it is used


def test_the_glossary_shows_settings_and_commands_as_code_not_backticks(client: TestClient):
    """Issue 49, item 7: definitions written with `backticks` showed them raw."""
    html = client.get("/glossary").text
    main = html[html.index("<main"):html.index("</main>")]
    assert "`" not in main
    assert "<code>glassrag calibrate</code>" in main and "<code>gate.cost</code>" in main
    gate = next(t for t in client.get("/glossary.json").json()["terms"] if t["term"] == "gate")
    assert "".join(p["text"] for p in gate["parts"]) == gate["definition"].replace("`", "")


@pytest.mark.parametrize("page", ["/", "/ask?q=What+is+the+probation+period%3F", "/analytics", "/runs/defaults-test",
                                  "/documents", "/documents/faq", "/glossary"])
def test_every_page_has_a_json_twin_that_it_links(client: TestClient, page: str):
    html = client.get(page)
    assert html.status_code == 200 and html.headers["content-type"].startswith("text/html")
    twin = re.search(r'<a class="twin" href="([^"]+)"', html.text)
    assert twin
    r = client.get(unescape(twin.group(1)))
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    json.loads(r.text)


def test_extra_json_serves_the_calibration(client: TestClient, demo_index: Path):
    data = client.get("/extra.json").json()
    extra = EmbeddedStore(demo_index).read().extra
    assert data["extra"]["gate"]["threshold"] == extra["gate"]["threshold"]
    assert np.allclose(data["extra"]["reranker"]["weights"], extra["reranker"]["weights"])


def test_several_indexes_are_served_by_name(demo_index: Path, index_copy: Path, make_client):
    client = make_client(demo_index, index_copy)
    assert client.get("/documents.json?index=demo-2").json()["index"] == "demo-2"
    html = client.get("/ask?index=demo-2").text
    assert 'href="/ask?index=demo"' in html and 'class="here">demo-2</a>' in html


def test_a_run_is_listed_without_a_restart(index_copy: Path, make_client):
    client = make_client(index_copy)
    before = [r["name"] for r in client.get("/analytics.json").json()["runs"]]
    (index_copy / "runs" / "copy.json").write_bytes((index_copy / "runs" / "plain-test.json").read_bytes())
    after = [r["name"] for r in client.get("/analytics.json").json()["runs"]]
    assert after == sorted(before + ["copy"])


def test_a_document_with_url_characters_in_its_name_links_its_json_twin(make_client, tmp_path: Path):
    """Issue 13.7: `Q&A #2.md` gave a twin link that answered 404, `we?ird#name.md` one that
    answered 400: the id was put in the link without URL-encoding."""
    from urllib.parse import quote

    from glassrag.config import Config
    from glassrag.indexer import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "Q&A #2.md").write_text("# Questions\n\nThe answer is forty-two.\n")
    (docs / "we?ird#name.md").write_text("# Weird\n\nA weird name.\n")
    (docs / "100% sure.md").write_text("# Sure\n\nCompletely.\n")
    index, _ = build_index([docs], Config().with_overrides(lsa={"dim": 2}))
    EmbeddedStore(tmp_path / "idx").write(index)
    client = make_client(tmp_path / "idx")
    for doc_id in ("Q&A #2", "we?ird#name", "100% sure"):
        html = client.get("/documents/" + quote(doc_id))
        assert html.status_code == 200, doc_id
        twin = re.search(r'<a class="twin" href="([^"]+)"', html.text)
        assert twin
        r = client.get(unescape(twin.group(1)))
        assert r.status_code == 200, (doc_id, twin.group(1))
        assert r.json()["document"]["id"] == doc_id


def test_a_question_of_hundreds_of_terms_gets_a_bounded_explanation(client: TestClient):
    """Issue 13.6: a 4,000-character question of repeated identifiers built a 1.66 MB answer
    (one BM25 row per question word per chunk). The explanation now lists at most
    MAX_EXPLAINED_TERMS terms per chunk, sums the rest in one row that says so, still adds
    up to the score, and the bm25 stage's notes say it was bounded."""
    from glassrag.web.ask import MAX_EXPLAINED_TERMS

    question = " ".join(f"E-{4100 + i % 300} TX-{2000 + i % 50}" for i in range(400))[:4000]
    r = client.get("/ask.json?" + urlencode({"q": question}))
    assert r.status_code == 200
    assert len(r.content) < 400_000
    data = r.json()
    table = data["bm25_terms"]
    assert table["bounded"] and len(table["terms"]) == MAX_EXPLAINED_TERMS + 1
    assert table["terms"][-1] == f"({table['distinct_terms'] - MAX_EXPLAINED_TERMS} more terms)"
    for row in table["rows"]:
        assert sum(c["contribution"] for c in row["cells"]) == pytest.approx(row["score"], rel=1e-5)
    for shown in data["shown"]:
        assert len(shown["bm25"]) <= MAX_EXPLAINED_TERMS + 1
    notes = [n for s in data["stages"] if s["name"] == "bm25" for n in s["notes"]]
    assert any(n.startswith(f"explanation bounded: {MAX_EXPLAINED_TERMS} of ") for n in notes)


def test_explain_groups_repeated_terms_and_bounds_them():
    from glassrag.lexical.bm25 import BM25, TermCounts

    bm25 = BM25(TermCounts.build([["tilt", "sensor", "error"], ["battery", "error"]]))
    rows = bm25.explain(["error", "tilt", "error", "zebra"], 0)
    assert [(r["term"], r["occurrences"]) for r in rows] == [("error", 2), ("tilt", 1), ("zebra", 1)]
    score = float(bm25.score_all(["error", "tilt", "error"])[0])
    assert sum(r["contribution"] for r in rows) == pytest.approx(score, rel=1e-6)
    bounded = bm25.explain(["error", "tilt", "error", "zebra"], 0, max_terms=1)
    assert [r["term"] for r in bounded] == ["tilt", "(2 more terms)"]  # tilt's idf is the larger
    assert sum(r["contribution"] for r in bounded) == pytest.approx(score, rel=1e-6)


def test_pages_are_built_in_a_bounded_pool_off_the_event_loop(demo_index: Path):
    """Issue 13.6: sixteen heavy questions at once ran in up to 40 threads and starved a simple
    one. Page work now runs in at most WORKERS threads, and the event loop stays free."""
    import threading
    import time

    import anyio

    from glassrag.web.server import WORKERS, create_app

    workers = create_app([demo_index]).state.workers
    running, peak, lock = [0], [0], threading.Lock()

    def slow(request, as_json):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return "built"

    async def main() -> list:
        ticks = []

        async def ticker() -> None:  # the loop keeps running while pages are built
            for _ in range(5):
                ticks.append(time.monotonic())
                await anyio.sleep(0.02)

        results = []

        async def one() -> None:
            results.append(await workers.run(slow, None, False))

        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            for _ in range(4 * WORKERS):
                tg.start_soon(one)
        return [results, ticks]

    results, ticks = anyio.run(main)
    assert results == ["built"] * (4 * WORKERS)
    assert peak[0] == WORKERS
    assert len(ticks) == 5 and ticks[-1] - ticks[0] < 0.5


def test_ask_page_switches_generation_on(index_copy: Path):
    """The page's Generate button (a POST with the server's token): the generated answer, its
    scores and the stage; the backend is the one the server was started with (serve --generator,
    a scripted OpenAI-compatible stub here), never a URL from the page or the index."""
    from tests.generate.test_endpoint import Stub

    stub = Stub()
    try:
        c = TestClient(create_app([index_copy], generator=stub.url), base_url=BASE_URL)
        token = re.search(r'name="token" value="([^"]+)"', c.get("/ask?" + urlencode({"q": E4107})).text)[1]
        r = c.post("/ask", data={"q": E4107, "token": token}, headers={"origin": BASE_URL})
        assert r.status_code == 200, r.text
        page = text_of(r.text)
        assert "Generated" in page and "It means the tilt sensor lost calibration [" in page
        assert "answered; citations of passages given: 1" in page
        data = c.post("/ask.json", data={"q": E4107, "token": token}).json()
        assert data["answer"]["generation"]["given"][0]["label"] in data["answer"]["generation"]["text"]
        assert [s["name"] for s in data["stages"]][-1] == "generate"
        assert data["generation_grade"]["foreign_citations"] == 0.0
        refused = c.get("/ask.json?" + urlencode({"q": E4107, "generate.backend": "http://evil.example/v1"}))
        assert refused.status_code == 400 and "does not call a URL" in refused.text
        assert stub.requests and all(q["path"] == "/v1/chat/completions" for q in stub.requests)
    finally:
        stub.close()
    # the endpoint gone: a 503 that says what to start, not a traceback
    gone = c.post("/ask.json", data={"q": E4107, "token": token})
    assert gone.status_code == 503 and "nothing usable answers" in gone.text and "llama-server" in gone.text


# sweeps --------------------------------------------------------------------------------------

def test_the_sweep_heat_map_is_the_sweep_file(client: TestClient, demo_index: Path):
    saved = json.loads((demo_index / "sweeps" / "k1-b" / "sweep.json").read_text(encoding="utf-8"))
    data = client.get("/analytics.json").json()
    sweep = next(s for s in data["sweeps"] if s["folder"] == "k1-b")
    assert sweep["metric"] == saved["metric"] == "ranking mrr@10" and sweep["size"] == 6
    heat = sweep["heat"]
    assert heat["row_name"] == "bm25.k1" and heat["column_name"] == "bm25.b"
    assert [c["label"] for c in heat["column_labels"]] == ["0.4", "0.75", "0.9"]
    assert [c["label"] for c in heat["row_labels"]] == ["0.9", "1.5"]
    by_settings = {(c["settings"]["bm25.k1"], c["settings"]["bm25.b"]): c["metric"]["value"]
                   for c in saved["configs"]}
    for cell in heat["cells"]:
        assert cell["value"] == by_settings[(float(cell["row"]), float(cell["column"]))]
    best = [c for c in heat["cells"] if c["best"]]
    assert len(best) == 1 and best[0]["value"] == saved["best"]["metric"]["value"] == max(by_settings.values())
    assert heat["cells"][0]["shade"].startswith("heat-")
    html = client.get("/analytics").text
    assert '<svg class="heat"' in html and html.count('<g class="cell') == 6 and 'class="cell best"' in html
    assert "Test (evaluated once):" in html and "every configuration (6)" in html


def test_a_broken_sweep_file_is_listed_not_fatal(make_client, index_copy: Path):
    broken = index_copy / "sweeps" / "broken"
    broken.mkdir(parents=True)
    (broken / "sweep.json").write_text("{not json", encoding="utf-8")
    client = make_client(index_copy)
    data = client.get("/analytics.json").json()
    assert {"folder": "broken", "file": "sweeps/broken/sweep.json",
            "problem": "not a glassrag sweep file"} in data["sweeps"]
    assert "not a glassrag sweep file" in client.get("/analytics").text


def test_the_front_page_and_the_ask_page_say_the_same_order_of_also_found(client: TestClient):
    """Issue 49, item 7: the front page said 'also found' is in rank order while the ask page
    numbers it 2, 4, 3, 5 (one passage per further document first) and says so."""
    front = text_of(client.get("/").text)
    ask = text_of(client.get("/ask?" + urlencode({"q": E4107})).text)
    assert "in the order of the same ranking" not in front
    assert "one from each further document first, then the rest, each numbered by its rank" in front
    assert "One passage from each further document first, then the rest; each is numbered by its rank" in ask

