"""The front page (`/` and `/.json`) over a small prepared corpus built as a user builds it
(`glassrag corpus build`, a subprocess): its figures are what `glassrag eval` prints, read
from the run file on every request; a corpus without a run says how to make one; the
picker and every link lead somewhere."""

from __future__ import annotations

import json
import os
import re
import shutil
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from glassrag.prepared import headline
from glassrag.retrieve import RETRIEVERS  # the retrievers every index has: what these settings name
from glassrag.schema import Run
from tests.test_corpus_command import glassrag, prepared
from tests.web.test_web_pages import text_of

# the front page's figure -> (the row of eval's table, its column): eval prints the ranking
# and the answer side by side, and the kinds in a table of their own
EVAL_CELLS = {"ranking hit@5": ("hit@5", "ranking (bm25)"), "answer hit@5": ("hit@5", "answer"),
              "answer visible@5": ("answer_visible@5", "answer"),
              "declined unanswerable": ("declined_unanswerable", "answer"),
              "answerable declined": ("declined_answerable  (lower is better)", "answer"),
              "declined off-topic (bundled set)": ("declined_offtopic", "answer")}
KIND_CELLS = {"of which kind unanswerable": "unanswerable", "of which kind off-topic": "off-topic"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkout-like folder with corpora/tea and its index .glassrag/corpora/tea, built by
    `glassrag corpus build tea` (which saves runs/defaults-test.json)."""
    root = tmp_path_factory.mktemp("front")
    prepared(root, "tea")
    r = glassrag("corpus", "build", "tea", cwd=root)
    assert r.returncode == 0, r.stderr
    return root


@pytest.fixture
def checkout(built: Path, tmp_path: Path) -> Path:
    """A copy of the built folder a test may change."""
    target = tmp_path / "checkout"
    shutil.copytree(built, target)
    return target


def tea_index(root: Path) -> Path:
    return root / ".glassrag" / "corpora" / "tea"


def printed_tables(stdout: str) -> list[list[dict[str, str]]]:
    """Every rich table in `stdout` as rows of {header: cell}."""
    tables: list[list[dict[str, str]]] = []
    header: list[str] = []
    for line in stdout.splitlines():
        if line.startswith("┃"):
            header = [c.strip() for c in line.strip("┃").split("┃")]
            tables.append([])
        elif line.startswith("│") and header:
            tables[-1].append(dict(zip(header, (c.strip() for c in line.strip("│").split("│")))))
    return tables


def shown(m: dict) -> str:
    """A figure as eval prints it (cli/evaluate.py's fmt)."""
    return f"{m['value']:.3f} [{m['low']:.3f}, {m['high']:.3f}]"


def corpus(client, name: str) -> dict:
    r = client.get("/.json")
    assert r.status_code == 200, r.text
    return next(c for c in r.json()["corpora"] if c["index"] == name)


@pytest.mark.slow
def test_the_figures_are_what_glassrag_eval_reports(checkout: Path, make_client):
    index = tea_index(checkout)
    (index / "runs" / "defaults-test.json").unlink()  # the build's: the run shown is eval's own
    r = glassrag("eval", "--index", index, "--golden", checkout / "corpora" / "tea" / "golden.jsonl",
                 "--split", "test", "--save", "defaults-test", cwd=checkout)
    assert r.returncode == 0, r.stderr
    tables = printed_tables(r.stdout)
    metrics = {row["metric"]: row for t in tables for row in t if "metric" in row and "n" in row}
    kinds = {row["kind"]: row for t in tables for row in t if "kind" in row and "declined" in row}
    figures = {f["label"]: f for f in corpus(make_client(index), "tea")["figures"]}
    assert set(EVAL_CELLS) | set(KIND_CELLS) <= set(figures)
    for label, (row, column) in EVAL_CELLS.items():
        assert shown(figures[label]) == metrics[row][column], label
        assert str(figures[label]["n"]) == metrics[row]["n"], label
    for label, kind in KIND_CELLS.items():
        assert shown(figures[label]) == kinds[kind]["declined"], label
    # and to the last digit, the saved file's (the same figures `corpus build` prints)
    saved = Run.from_dict(json.loads((index / "runs" / "defaults-test.json").read_text()), "saved")
    assert [(f["label"], {k: f[k] for k in ("value", "low", "high", "n")}) for f in figures.values()] == \
        [(label.strip(), dict(m)) for label, m in headline(saved)]


@pytest.mark.slow
def test_a_changed_run_file_changes_the_next_request(checkout: Path, make_client):
    index = tea_index(checkout)
    path = index / "runs" / "defaults-test.json"
    client = make_client(index)
    before = corpus(client, "tea")
    assert before["run"]["file"] == "runs/defaults-test.json"
    run = json.loads(path.read_text())
    run["answer"]["metrics"]["hit@5"].update(value=0.4321, low=0.1234, high=0.8765)
    path.write_text(json.dumps(run))
    hit = next(f for f in corpus(client, "tea")["figures"] if f["label"] == "answer hit@5")
    assert (hit["value"], hit["low"], hit["high"]) == (0.4321, 0.1234, 0.8765)
    assert "0.432 [0.12, 0.88]" in text_of(client.get("/").text)
    # rewritten to the same size with its modification time put back: read again all the same
    stat = path.stat()
    path.write_text(path.read_text().replace("0.4321", "0.4329"))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    hit = next(f for f in corpus(client, "tea")["figures"] if f["label"] == "answer hit@5")
    assert hit["value"] == 0.4329
    # a record that now says declined moves its question among the declined examples
    record = next(q for q in run["questions"] if q["answerable"] and not q["declined"])
    record["declined"] = True
    path.write_text(json.dumps(run))
    groups = {q["id"]: q["group"] for q in corpus(client, "tea")["examples"]}
    assert groups[record["id"]] == "declined, answerable"


@pytest.mark.slow
def test_the_headline_run_is_the_builds_else_the_latest_test_run(checkout: Path, make_client):
    index = tea_index(checkout)
    runs = index / "runs"
    run = json.loads((runs / "defaults-test.json").read_text())
    (runs / "defaults-test.json").unlink()
    for name, created, split in (("older", "2026-01-01T00:00:00+0000", "test"),
                                 ("newer", "2026-02-01T00:00:00+0000", "test"),
                                 ("train-run", "2026-03-01T00:00:00+0000", "train")):
        (runs / f"{name}.json").write_text(json.dumps({**run, "created": created,
                                                       "golden": {**run["golden"], "split": split}}))
    (runs / "broken.json").write_text("{not json")
    client = make_client(index)
    shown_run = corpus(client, "tea")["run"]
    assert (shown_run["name"], shown_run["created"]) == ("newer", "2026-02-01T00:00:00+0000")
    page = text_of(client.get("/").text)
    assert "Figures from runs/newer.json" in page and "written 2026-02-01 00:00 UTC" in page
    # defaults-test comes first, but only as a run of the test split
    (runs / "defaults-test.json").write_text(json.dumps({**run, "golden": {**run["golden"], "split": "train"}}))
    assert corpus(client, "tea")["run"]["name"] == "newer"
    (runs / "defaults-test.json").write_text(json.dumps(run))
    assert corpus(client, "tea")["run"]["name"] == "defaults-test"


@pytest.mark.slow
def test_the_page_links_every_corpus_and_says_how_to_make_a_missing_run(built: Path, tmp_path: Path,
                                                                         make_client, monkeypatch):
    # a second checkout whose tea index has no run yet (served from there: corpus build knows it)
    other = tmp_path / "other"
    prepared(other, "tea")
    shutil.copytree(tea_index(built), tea_index(other), ignore=shutil.ignore_patterns("runs"))
    monkeypatch.chdir(other)
    client = make_client(tea_index(built), tea_index(other))
    r = client.get("/?index=tea-2")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    html = r.text
    # the picker, the navigation and the twin
    assert 'href="/?index=tea"' in html and 'href="/?index=tea-2" class="here"' in html
    assert 'href="/?index=tea-2" class="here" aria-current="page">Corpora</a>' in html
    twin = re.search(r'<a class="twin" href="([^"]+)"', html).group(1)
    assert client.get(unescape(twin)).json()["index"] == "tea-2"
    data = client.get("/.json?index=tea-2").json()
    built_one, missing = data["corpora"]
    assert (built_one["documents"], built_one["chunks"]) == (4, 12)
    assert built_one["golden"]["questions"] == 12 and built_one["golden"]["test"] == 6
    # the stages, from the index's settings
    stages = {s["stage"]: {kv["name"]: kv["value"] for kv in s["settings"]} for s in built_one["stages"]}
    assert list(stages) == ["chunk", "retrieve", "fuse", "rerank", "gate", "read"]
    assert stages["chunk"]["chunk.chunker"] == "heading" and stages["retrieve"]["bm25.k1"] == 1.5
    assert stages["rerank"]["auto runs"] == "none" and stages["gate"]["gate.enabled"] is True
    # every question to try links its ask page, and one the run declined is declined there too
    records = {q["id"]: q for q in json.loads((tea_index(built) / "runs" / "defaults-test.json").read_text())["questions"]}
    assert built_one["examples"]
    for q in built_one["examples"]:
        assert f'href="{q["link"].replace("&", "&amp;")}"' in html
        assert parse_qs(urlsplit(q["link"]).query) == {"index": ["tea"], "q": [records[q["id"]]["question"]]}
        assert q["declined"] == records[q["id"]]["declined"]
    declined = [q for q in built_one["examples"] if q["group"] == "declined, unanswerable"]
    assert declined, "the run declined an unanswerable question; the page should offer it"
    asked = client.get(declined[0]["link"].replace("/ask?", "/ask.json?")).json()
    assert asked["answer"]["declined"] is True
    # the index without a run: no figures, and the commands that make one
    assert missing["run"] is None and missing["figures"] == [] and missing["examples"] == []
    assert missing["make_run"][0] == "glassrag corpus build tea"
    section = text_of(html.split('id="corpus-tea-2"')[1])
    assert "No run of the test split is saved for this index yet" in section
    assert "glassrag corpus build tea" in section and "--save defaults-test" in section
    # from a page of one index's document, and from an error, the picker leads to a page that exists
    for page, target in (("/documents/green-tea?index=tea", "/documents?index=tea-2"),
                         ("/nope", "/?index=tea-2"), ("/?index=nope", "/?index=tea-2")):
        html = client.get(page).text
        assert f'href="{target}"' in html, page
        assert client.get(target).status_code == 200


@pytest.mark.slow
def test_an_unknown_parameter_is_refused(built: Path, make_client):
    client = make_client(tea_index(built))
    r = client.get("/.json?q=x")
    assert r.status_code == 400 and "this page takes: index" in r.json()["hint"]


def gate_stage(config, extra: dict) -> tuple[dict, str]:
    from glassrag.web.home import stages

    stage = next(s for s in stages(config, extra, RETRIEVERS) if s["stage"] == "gate")
    return {kv["name"]: kv["value"] for kv in stage["settings"]}, stage["note"]


def test_the_gate_s_state_comes_from_the_settings_and_the_calibration():
    """Off, not calibrated, calibrated for these settings, calibrated for others (it then
    passes every question), and calibrated but unable to separate: each said as it is."""
    from glassrag.config import Config
    from glassrag.gate.threshold import scoring_settings

    plain = Config().with_overrides(gate={"answerability": "none"})
    assert gate_stage(plain.with_overrides(gate={"enabled": False}), {})[1].startswith("off")
    assert gate_stage(plain, {})[1].startswith("not calibrated")
    cal = {"score": {"kind": "signal", "name": "bm25_norm"}, "threshold": 0.25, "separable": True,
           "auroc": {"auroc": 0.8, "low": 0.7, "high": 0.9}, "split": "train", "golden": "corpora/x/golden.jsonl",
           "settings": scoring_settings(plain, None, "none", None)}
    values, note = gate_stage(plain, {"gate": cal})
    assert (values["score"], values["threshold"]) == ("bm25_norm", 0.25)
    assert note == ("calibrated on the train split of golden.jsonl: declines a question whose score is below "
                    "the threshold (AUROC on train 0.80 [0.70, 0.90])")
    _, note = gate_stage(plain.with_overrides(bm25={"k1": 0.9}), {"gate": cal})
    assert note.startswith("calibrated for other settings (bm25.k1 was 1.5, now 0.9)") and "passes every question" in note
    _, note = gate_stage(plain, {"gate": {**cal, "separable": False}})
    assert "declines nothing" in note


def test_fusion_is_shown_as_run_only_with_two_retrievers():
    from glassrag.config import Config
    from glassrag.web.home import stages

    def fuse(config: Config) -> dict:
        return next(s for s in stages(config, {}, RETRIEVERS) if s["stage"] == "fuse")

    one = fuse(Config())
    assert one["note"].startswith("not run: one retriever is fused (bm25)")
    two = fuse(Config().with_overrides(retrieve={"retrievers": ["bm25", "lsa"]}, fuse={"method": "rrf"}))
    assert two["note"] == "" and {kv["name"]: kv["value"] for kv in two["settings"]} == {"fuse.method": "rrf", "fuse.k": 60}


@pytest.mark.slow
def test_an_index_that_cannot_be_read_is_named_and_the_others_shown(checkout: Path, make_client):
    index = tea_index(checkout)
    client = make_client(index)
    (index / "CURRENT").unlink()  # the index is gone after the server started
    r = client.get("/.json")
    assert r.status_code == 200
    tea, = r.json()["corpora"]
    assert "no longer a glassrag index" in tea["problem"] and "glassrag ingest" in tea["hint"]
    assert "no longer a glassrag index" in text_of(client.get("/").text)
