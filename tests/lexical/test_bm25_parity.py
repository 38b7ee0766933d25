"""glassrag's BM25 against bm25s (method="lucene") on real SciFact documents, same tokens.

bm25s leaves out the constant factor (k1 + 1) of the Lucene formula, so glassrag's
scores equal bm25s's times (k1 + 1).
"""

import json
from pathlib import Path

import numpy as np
import pytest

from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import BM25, TermCounts

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact"
bm25s = pytest.importorskip("bm25s")


def load(n_docs: int, n_queries: int):
    if not SCIFACT.exists():
        pytest.skip(f"SciFact not found at {SCIFACT}")
    with (SCIFACT / "corpus.jsonl").open() as f:
        docs = [json.loads(next(f)) for _ in range(n_docs)]
    with (SCIFACT / "queries.jsonl").open() as f:
        queries = [json.loads(next(f))["text"] for _ in range(n_queries)]
    return [d["title"] + " " + d["text"] for d in docs], queries


@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (1.5, 0.75)])
def test_scores_equal_bm25s_lucene_times_k1_plus_1(k1, b):
    texts, queries = load(400, 60)
    analyzer = Analyzer()
    tokens = [analyzer(t) for t in texts]
    ours = BM25(TermCounts.build(tokens), k1=k1, b=b)
    ref = bm25s.BM25(method="lucene", k1=k1, b=b)
    ref.index(tokens, show_progress=False)
    checked = 0
    for q in queries:
        qt = [t for t in analyzer(q) if t in ours.counts.vocab]
        if not qt:
            continue
        expected = ref.get_scores(qt) * (k1 + 1)
        np.testing.assert_allclose(ours.score_all(qt), expected, rtol=1e-6, atol=1e-6)
        checked += 1
    assert checked > 40
