"""BEIR folders end to end, and glassrag's metrics against pytrec_eval on the exported
TREC run and qrels (to 1e-4)."""

import json
import random
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.errors import GoldenError
from glassrag.evaluate.beir import load_beir_questions
from glassrag.evaluate.runs import evaluate
from glassrag.evaluate.trec import read_qrels, read_run, write_qrels, write_run
from glassrag.indexer import build_index
from glassrag.pipeline import Pipeline

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"
pytrec_eval = pytest.importorskip("pytrec_eval")


def mini_scifact(folder: Path, n_queries: int = 60, n_noise: int = 600) -> Path:
    """The test queries' judged documents plus seeded random others, in a BEIR folder."""
    if not SCIFACT.exists():
        pytest.skip(f"SciFact not found at {SCIFACT}")
    rows = [l.split("\t") for l in (SCIFACT / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    queries = sorted({r[0] for r in rows}, key=int)[:n_queries]
    judged = {r[1] for r in rows if r[0] in queries}
    corpus = [json.loads(l) for l in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    keep = {d["_id"] for d in random.Random(0).sample(corpus, n_noise)} | judged
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in corpus if d["_id"] in keep))
    (folder / "queries.jsonl").write_text(
        (SCIFACT / "queries.jsonl").read_text())
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join("\t".join(r) + "\n" for r in rows if r[0] in queries))
    return folder


def test_beir_metrics_equal_pytrec_eval(tmp_path: Path):
    folder = mini_scifact(tmp_path / "scifact")
    index, report = build_index([folder], Config().with_overrides(lsa={"dim": 32}))
    assert not report.failed
    assert len(index.chunks) == len(index.documents)  # one chunk per BEIR document
    questions = load_beir_questions(folder, "test")
    run = evaluate(Pipeline(index), questions)
    write_run(run.questions, tmp_path / "run.trec", level="doc")
    write_qrels(questions, tmp_path / "qrels.trec", level="doc")
    trec_run = read_run(tmp_path / "run.trec")
    qrels = read_qrels(tmp_path / "qrels.trec")
    scored = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in trec_run.items()}
    cut10 = {q: {d: s for d, s in ranked.items() if s > len(ranked) - 10} for q, ranked in scored.items()}
    full = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(scored)
    rr10 = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut10)
    mean = lambda per_q, key: sum(per_q.get(q, {}).get(key, 0.0) for q in qrels) / len(qrels)
    assert run.ranking.metrics["ndcg@10"]["value"] == pytest.approx(mean(full, "ndcg_cut_10"), abs=1e-4)
    assert run.ranking.metrics["recall@100"]["value"] == pytest.approx(mean(full, "recall_100"), abs=1e-4)
    assert run.ranking.metrics["mrr@10"]["value"] == pytest.approx(mean(rr10, "recip_rank"), abs=1e-4)
    assert run.ranking.metrics["ndcg@10"]["n"] == len(qrels)


def test_query_id_equal_to_a_document_id_is_dropped(tmp_path: Path):
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        json.dumps({"_id": "7", "title": "Tilt", "text": "tilt sensor calibration"}) + "\n"
        + json.dumps({"_id": "8", "title": "Tilt too", "text": "tilt sensor again"}) + "\n")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "7", "text": "tilt sensor"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n7\t8\t1\n")
    index, _ = build_index([folder], Config().with_overrides(lsa={"dim": 2}))
    run = evaluate(Pipeline(index), load_beir_questions(folder))
    assert [d for _, d, _ in run.questions[0].ranking] == ["8"]
    assert run.answer.metrics["hit@1"]["value"] == 1.0 == run.ranking.metrics["hit@1"]["value"]


def test_bad_beir_rows_are_reported_by_line(tmp_path: Path):
    folder = tmp_path / "b"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "1", "title": "", "text": "x"}\n{broken\n')
    (folder / "queries.jsonl").write_text('{"_id": "q", "text": "x"}\n')
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\t1\n" "q\t1\tx\nzz\t1\t1\n")
    with pytest.raises(GoldenError) as info:
        load_beir_questions(folder)
    assert info.value.problems == [(2, "expected 3 columns (query-id, corpus-id, score), got 2"),
                                   (3, "score 'x' is not a whole number"),
                                   (4, "query 'zz' is not in queries.jsonl")]
    index, report = build_index([folder], Config().with_overrides(lsa={"dim": 1}))
    assert list(index.documents) == ["1"]
    assert report.failed[0].path.endswith("corpus.jsonl:2")
