"""The experiment log: entries are checked when read, the verdict follows its rule, and a
measured experiment writes evidence that the report and the development page show."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from glassrag.errors import ConfigError
from glassrag.experiment import load, load_all, read_evidence, run_experiments
from glassrag.experiment.log import Experiment
from glassrag.experiment import verdict as rule
from glassrag.experiment.measure import decide_rule1, with_holm
from glassrag.experiment.report import render, section

CAP = """title = "One passage per document"
hypothesis = "More sources, fewer answers."
metric = "answer hit@5"
also = ["answer source_recall@5"]
corpora = ["demo"]
verdict = "rejected"

[change]
cap = { per_document = 1 }
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ('title = "t"\nhypothesis = "h"\nverdict = "maybe"\ncommand = "x"\n', "verdict 'maybe' is not one of"),
    ('title = "t"\nhypothesis = "h"\nverdict = "kept"\n', "needs [change]"),
    ('title = "t"\nhypothesis = "h"\nverdict = "kept"\ncorpora = ["demo"]\n[change]\nbm25 = { k1 = 1.0 }\n',
     "'metric'"),
    ('title = "t"\nhypothesis = "h"\nverdict = "kept"\nmetric = "answer hit@5"\ncorpora = ["demo"]\n'
     '[change]\nbm25 = { k9 = 1.0 }\n', "k9"),
    ('title = "t"\nhypothesis = "h"\nverdict = "kept"\nmetric = "answer hit@5"\ncorpora = ["demo"]\n'
     '[change]\nbm25 = { b = 7.0 }\n', "bm25.b"),
    ('title = "t"\nhypothesis = "h"\nverdict = "kept"\ncommand = "x"\ncolour = "red"\n', "unknown key 'colour'"),
    ('title = "t"\nhypothesis = [\n', "not valid TOML"),
])
def test_a_bad_entry_is_refused_naming_its_file_and_problem(tmp_path, text, message):
    path = write(tmp_path, "bad", text)
    with pytest.raises(ConfigError) as e:
        load(path)
    assert str(path) in str(e.value) and message in str(e.value)


def test_the_change_is_layered_on_the_baseline(tmp_path):
    e = load(write(tmp_path, "k1", 'title = "t"\nhypothesis = "h"\nverdict = "kept"\nmetric = "ranking mrr@10"\n'
                                   'corpora = ["demo"]\n[baseline]\nbm25 = { b = 0.75 }\n[change]\nbm25 = { k1 = 0.9 }\n'))
    base, changed = e.configs()
    assert (base.bm25.k1, base.bm25.b) == (1.5, 0.75)
    assert (changed.bm25.k1, changed.bm25.b) == (0.9, 0.75)


def row(diff: float, p: float, better: str = "higher") -> dict:
    return {"measured": True, "diff": diff, "p": p, "better": better}


def verdict(metric_rows: dict, also_rows: dict | None = None) -> str:
    e = Experiment("x", "t", "h", "kept", metric="m", also=("a",) if also_rows else (),
                   corpora=tuple(metric_rows), change={"bm25": {"k1": 1.0}})
    per = {c: {"metrics": {"m": r, **({"a": also_rows[c]} if also_rows else {})}} for c, r in metric_rows.items()}
    return decide_rule1(e, with_holm(e, per))[0]


def test_rule_1_the_verdict_of_evidence_before_rule_2():
    # Holm over two corpora: the smaller p is doubled, so 0.02 -> 0.04 counts and 0.03 -> 0.06 does not
    assert verdict({"a": row(0.1, 0.02), "b": row(0.1, 0.02)}) == "kept"
    assert verdict({"a": row(0.1, 0.03), "b": row(0.0, 1.0)}) == "rejected"
    assert verdict({"a": row(0.1, 0.001), "b": row(0.0, 1.0)}) == "one corpus only"
    assert verdict({"a": row(0.1, 0.001)}) == "kept"
    assert verdict({"a": row(0.1, 0.001), "b": row(-0.1, 0.001)}) == "trade"
    assert verdict({"a": row(-0.1, 0.001), "b": row(0.0, 1.0)}) == "rejected"
    # lower is better: a fall is an improvement
    assert verdict({"a": row(-0.1, 0.001, "lower")}) == "kept"
    # the deciding metric worse, a reported one better: a trade (the diversity cap)
    assert verdict({"a": row(-0.1, 0.001)}, {"a": row(0.2, 0.001)}) == "trade"
    assert verdict({"a": row(0.1, 0.001)}, {"a": row(-0.2, 0.001)}) == "trade"
    assert verdict({"a": {"measured": False}}) == "rejected"


def test_holm_is_added_to_a_copy_per_family():
    e = Experiment("x", "t", "h", "kept", metric="m", also=("a",), corpora=("c1", "c2"),
                   change={"bm25": {"k1": 1.0}})
    per = {"c1": {"metrics": {"m": row(0.1, 0.01), "a": row(0.1, 0.04)}},
           "c2": {"metrics": {"m": row(0.1, 0.03), "a": {"measured": False}}}, "c3": {"skipped": "no data"}}
    before = copy.deepcopy(per)
    got = with_holm(e, per)
    assert per == before  # the evidence given is not touched
    # the metric over its two corpora: 0.01 × 2, max(0.02, 0.03 × 1); `also` alone in its family
    assert [got[c]["metrics"]["m"]["p_holm"] for c in ("c1", "c2")] == pytest.approx([0.02, 0.03])
    assert got["c1"]["metrics"]["a"]["p_holm"] == pytest.approx(0.04)
    assert "p_holm" not in got["c2"]["metrics"]["a"] and got["c3"] == {"skipped": "no data"}


def test_section_reads_one_heading_down_to_the_next_of_its_level():
    text = "# A\nintro\n### M1: x\none\n#### deeper\ntwo\n### M2: y\nthree\n"
    assert section(text, "M1: x") == "one\n#### deeper\ntwo"
    with pytest.raises(ValueError):
        section(text, "M3")


@pytest.fixture(scope="module")
def measured_log(tmp_path_factory) -> Path:
    """A log with one experiment on the demo, measured for real (two fitted pipelines)."""
    root = tmp_path_factory.mktemp("project")
    log = root / "experiments"
    log.mkdir()
    (log / "corpora.toml").write_text('[demo]\ntitle = "the demo"\ndocuments = ["glassrag:demo"]\n'
                                      'golden = "glassrag:demo"\n', encoding="utf-8")
    write(log, "cap", CAP)
    write(log, "bench-x", 'title = "A benchmark"\nhypothesis = "h"\nverdict = "kept"\ncommand = "python b.py"\n'
                          'results = "r.md#Part two"\ncites = ["bm25.k1"]\n')
    (root / "r.md").write_text("# R\n## Part one\nno\n## Part two\n| a |\n|---|\n| 1 |\n", encoding="utf-8")
    run_experiments(log, [e for e in load_all(log) if e.measured])
    return log


@pytest.mark.slow  # end to end, over 10 s here (docs/testing.md)
def test_the_baseline_and_the_change_share_the_stages_before_the_change(measured_log):
    """One stage cache per index: the change (a cap after the reranker) runs the stages
    before the cap from the baseline's outputs, and its run is the one evaluated without it."""
    from glassrag.evaluate.runs import evaluate
    from glassrag.experiment import work_folder
    from glassrag.experiment.corpora import load_corpora
    from glassrag.experiment.measure import Measurer
    from glassrag.pipeline import Pipeline

    work = work_folder(measured_log)  # the fixture built the index there: read, not rebuilt
    corpora = load_corpora(measured_log)
    cap = load(measured_log / "cap.toml")
    measurer = Measurer(work, corpora, work / "runs-shared")
    evidence = measurer.measure(cap)
    bench = measurer.workbench(corpora["demo"])
    base, change = cap.configs()
    assert [v.built for v in bench.variants()] == [False]  # the cap needs no re-ingest: one index, read
    cache = bench.variant(base).cache
    assert cache is bench.variant(change).cache
    questions = bench.split("test")
    # every question's stages before the cap (analyze, bm25, lsa, versions, rerank) come from the
    # baseline's run: at least five reused outputs a question
    assert cache.hits >= 5 * len(questions)
    alone = evaluate(Pipeline(bench.fitted(change)[0], change), questions, "demo", "test", "demo")
    with_cache = json.loads(Path(evidence["corpora"]["demo"]["runs"]["change"]).read_text())
    without = json.loads(json.dumps(alone.to_dict()))
    assert with_cache["answer"] == without["answer"]

    def stages(run: dict) -> list:  # what each stage had, without its time
        return [{s: {k: v for k, v in got.items() if k != "ms"} for s, got in q["stages"].items()}
                for q in run["questions"]]

    assert stages(with_cache) == stages(without)


def test_measuring_writes_evidence_from_real_runs(measured_log):
    evidence = read_evidence(measured_log, "cap")
    demo = evidence["corpora"]["demo"]
    hit = demo["metrics"]["answer hit@5"]
    assert hit["measured"] and hit["n"] == 50  # the demo's answerable test questions
    assert hit["diff"] == pytest.approx(hit["change"]["value"] - hit["baseline"]["value"])
    assert hit["improved"] == len(demo["flips"]["improved"]) and hit["degraded"] == len(demo["flips"]["degraded"])
    # the runs behind the evidence are real run files, and their figures are the evidence's
    from glassrag.schema import Run

    for side in ("baseline", "change"):
        run = Run.from_dict(json.loads(Path(demo["runs"][side]).read_text()))
        assert run.flat_metrics()["answer hit@5"]["value"] == hit[side]["value"]
        assert run.config["cap"]["per_document"] == (1 if side == "change" else 0)
    assert evidence["rule"] == rule.RULE
    assert evidence["verdict"] == rule.decide("answer hit@5", ["answer source_recall@5"], evidence["corpora"])[0]
    pq = demo["per_question"]["answer hit@5"]
    assert len(pq["ids"]) == hit["n"] and sum(pq["change"]) / hit["n"] == pytest.approx(hit["change"]["value"])
    assert evidence["reproduced"] == (evidence["verdict"] == "rejected")
    assert evidence["provenance"]["packages"]["glassrag"]


def test_the_report_is_generated_from_the_log(measured_log):
    text = render(measured_log)
    evidence = read_evidence(measured_log, "cap")
    assert "### One passage per document (`cap`)" in text
    assert f"**Verdict: {evidence['verdict']}**" in text
    base = evidence["corpora"]["demo"]["metrics"]["answer hit@5"]["baseline"]["value"]
    assert f"| demo | answer hit@5 | {base:.3f}" in text
    assert "| a |\n|---|\n| 1 |" in text and "no\n" not in text.split("A benchmark")[1]
    assert "    python b.py" in text and "`bm25.k1`" in text


def test_report_check_says_when_the_file_is_stale(measured_log, tmp_path):
    from glassrag.cli import main

    target = tmp_path / "m.md"
    assert main(["experiment", "report", "--log", str(measured_log), "--out", str(target)]) == 0
    assert main(["experiment", "report", "--log", str(measured_log), "--out", str(target), "--check"]) == 0
    target.write_text(target.read_text() + "hand edit\n")
    assert main(["experiment", "report", "--log", str(measured_log), "--out", str(target), "--check"]) == 1


def test_the_development_page_shows_the_log(measured_log, demo_index_for_log):
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    client = TestClient(create_app([demo_index_for_log], log=measured_log), base_url="http://127.0.0.1")
    evidence = read_evidence(measured_log, "cap")
    data = client.get("/development.json").json()
    (x,) = data["experiments"]
    assert x["name"] == "cap" and x["verdict"] == evidence["verdict"]
    assert data["benchmarks"][0]["cites"] == ["bm25.k1"]
    page = client.get("/development")
    assert page.status_code == 200 and "One passage per document" in page.text
    assert "/development.json" in page.text and "<svg" in page.text
    run = client.get("/development/runs/cap/demo-change.json")
    assert run.status_code == 200 and run.json()["config"]["cap"]["per_document"] == 1
    assert client.get("/development/runs/cap/nope.json").status_code == 404
    assert client.get("/development.json?metric=nonsense").status_code == 400
    bare = TestClient(create_app([demo_index_for_log]), base_url="http://127.0.0.1")
    assert "no experiment log" in bare.get("/development").text


@pytest.fixture(scope="module")
def demo_index_for_log(tmp_path_factory) -> Path:
    from glassrag.config import Config
    from glassrag.demo import demo_docs
    from glassrag.indexer import build_index
    from glassrag.store import EmbeddedStore

    folder = tmp_path_factory.mktemp("idx") / "demo"
    index, _ = build_index([demo_docs()], Config())
    EmbeddedStore(folder).write(index)
    return folder


def test_evidence_records_the_baseline_and_today_it_has_not_moved(measured_log):
    from glassrag.config import Config
    from glassrag.experiment.drift import flat, moved, unrecorded

    evidence = read_evidence(measured_log, "cap")
    recorded = evidence["corpora"]["demo"]["baseline_settings"]
    assert recorded == flat(Config().to_dict())  # the cap's baseline is the defaults, every setting of them
    assert isinstance(recorded["gate.signals"], list)  # a tuple kept as JSON holds it, so it compares equal
    assert moved(load(measured_log / "cap.toml"), evidence) == {} and unrecorded(evidence) == []
    assert "(baseline moved)" not in render(measured_log) and "None is marked now." in render(measured_log)


def moved_copy(measured_log: Path, tmp_path: Path, setting: str, then) -> Path:
    """A copy of the measured log whose evidence says `setting` was `then` when it ran (as if the
    default moved since), and whose corpora.toml names a second corpus the entry does not list."""
    import shutil

    log = tmp_path / "experiments"
    shutil.copytree(measured_log, log)
    (log / "corpora.toml").write_text((measured_log / "corpora.toml").read_text() + '[other]\ntitle = "o"\n'
                                      'documents = ["docs"]\ngolden = "g.jsonl"\n', encoding="utf-8")
    path = log / "results" / "cap.json"
    evidence = json.loads(path.read_text())
    evidence["corpora"]["demo"]["baseline_settings"][setting] = then
    path.write_text(json.dumps(evidence), encoding="utf-8")
    return log


def test_a_default_that_moved_since_is_named_in_the_report_list_and_run(measured_log, demo_index_for_log, tmp_path,
                                                                        capsys):
    from glassrag.cli import main
    from glassrag.config import Config

    now = Config().bm25.k1
    log = moved_copy(measured_log, tmp_path, "bm25.k1", now + 0.3)
    evidence = read_evidence(log, "cap")
    from glassrag.experiment.drift import moved

    assert moved(load(log / "cap.toml"), evidence) == {"demo": [("bm25.k1", now + 0.3, now)]}
    text = render(log)
    assert f"**The baseline's settings have moved since:** `bm25.k1` {now + 0.3} → {now} (demo)" in text
    assert f"| {evidence['verdict']} (baseline moved) |" in text
    assert "Marked now: 1 (`cap`)" in text
    from starlette.testclient import TestClient

    from glassrag.web.server import create_app

    client = TestClient(create_app([demo_index_for_log], log=log), base_url="http://127.0.0.1")
    (x,) = client.get("/development.json").json()["experiments"]
    assert x["moved"] == f"bm25.k1 {now + 0.3} → {now} (demo)"
    assert "baseline moved" in client.get("/development").text
    capsys.readouterr()
    assert main(["experiment", "list", "--log", str(log)]) == 0
    assert "moved: bm25.k1" in capsys.readouterr().out
    # --moved picks the entries whose baseline moved; --corpus other measures nothing of the
    # cap (it lists only the demo), so its figures are kept and decided again, quickly
    main(["experiment", "run", "--moved", "--corpus", "other", "--log", str(log)])
    assert "cap:" in capsys.readouterr().out
    assert main(["experiment", "run", "--moved", "--log", str(measured_log)]) == 0
    assert "no experiment was measured against a baseline that has since moved" in capsys.readouterr().out


def test_run_refuses_a_corpus_the_log_does_not_have(measured_log, capsys):
    from glassrag.cli import main

    before = (measured_log / "results" / "cap.json").read_bytes()
    assert main(["experiment", "run", "cap", "--corpus", "demmo", "--log", str(measured_log)]) == 2
    said = " ".join(capsys.readouterr().err.split())
    assert "--corpus demmo: not a corpus of" in said and "it has: demo" in said
    assert (measured_log / "results" / "cap.json").read_bytes() == before

