"""The lab on a SciFact index (BEIR: one chunk per abstract, graded qrels, no golden JSONL):
the server finds the questions through the corpus the index was built from, and every
exhibit answers; exhibits 2 and 4 equal evaluate() on the same settings. Skipped when the
SciFact data is not on this machine (/work/shared/bench/scifact)."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from glassrag.config import Config
from glassrag.evaluate.beir import load_beir_questions
from glassrag.evaluate.runs import evaluate
from glassrag.indexer import build_index
from glassrag.lab.base import LabBench
from glassrag.lab.fusion import config_for
from glassrag.lab import EXHIBITS
from glassrag.pipeline import Pipeline
from glassrag.store import EmbeddedStore

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"


def mini_scifact(folder: Path, per_split: int = 40, n_noise: int = 400) -> Path:
    """The first `per_split` train and test queries with their judged abstracts and seeded
    random others, as a BEIR folder."""
    if not SCIFACT.exists():
        pytest.skip(f"SciFact not found at {SCIFACT}")
    (folder / "qrels").mkdir(parents=True)
    judged: set[str] = set()
    for split in ("train", "test"):
        rows = [l.split("\t") for l in (SCIFACT / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]]
        queries = sorted({r[0] for r in rows}, key=int)[:per_split]
        kept = [r for r in rows if r[0] in queries]
        judged |= {r[1] for r in kept}
        (folder / "qrels" / f"{split}.tsv").write_text(
            "query-id\tcorpus-id\tscore\n" + "".join("\t".join(r).rstrip("\n") + "\n" for r in kept))
    corpus = [json.loads(l) for l in (SCIFACT / "corpus.jsonl").read_text().splitlines()]
    keep = {d["_id"] for d in random.Random(0).sample(corpus, n_noise)} | judged
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus if d["_id"] in keep))
    (folder / "queries.jsonl").write_text((SCIFACT / "queries.jsonl").read_text())
    return folder


@pytest.fixture(scope="module")
def scifact(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("lab-scifact")
    data = mini_scifact(root / "scifact")
    index, report = build_index([data], Config().with_overrides(lsa={"dim": 32}))
    assert not report.failed
    EmbeddedStore(root / "index").write(index)
    return data, root / "index"


def test_every_exhibit_answers_on_a_scifact_index(scifact, make_client):
    data, folder = scifact
    client = make_client(folder)
    home = client.get("/lab.json").json()
    assert home["golden"] == str(data.resolve()) and home["questions"] == len(load_beir_questions(data, "all"))
    for name in EXHIBITS:
        r = client.get(f"/lab/{name}.json")
        assert r.status_code == 200, (name, r.text[:400])
        assert client.get(f"/lab/{name}").status_code == 200


def test_scifact_bm25_and_fusion_equal_evaluate(scifact, make_client):
    data, folder = scifact
    client = make_client(folder)
    index = EmbeddedStore(folder).read()
    test = load_beir_questions(data, "test")
    # other settings than the index's: with the token, as the exhibit's own form sends them (issue 51.3)
    token = re.search(r'name="token" value="([^"]+)"', client.get("/lab/bm25").text)[1]
    bm25 = client.get(f"/lab/bm25.json?k1=1.2&b=0.75&commit=1&token={token}").json()
    run = evaluate(Pipeline(index, index.config.with_overrides(bm25={"k1": 1.2, "b": 0.75})), test).to_dict(deep=False)
    assert bm25["test"] == pytest.approx(run["stages"]["bm25"]["recall@5"]["value"], abs=1e-12)
    fusion = client.get(f"/lab/fusion.json?method=rrf&k=60&token={token}").json()
    bench = LabBench("check", index, tuple(load_beir_questions(data, "all")), str(data))
    run = evaluate(Pipeline(index, config_for(bench, "rrf", 60, 0.7)), test).to_dict(deep=False)
    for row in fusion["rows"]:
        assert row["metrics"]["ndcg@10"] == pytest.approx(run["stages"][row["stage"]]["ndcg@10"]["value"], abs=1e-12)
