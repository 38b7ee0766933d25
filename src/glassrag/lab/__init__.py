"""The lab: six exhibits, each measuring one step of retrieval on an index and its labelled
questions with glassrag's own stages (nothing re-implemented), looked up by name in EXHIBITS.

    cuts    1. where the cuts land (chunking)           bm25    2. BM25 and the exact word
    lsa     3. meaning from co-occurrence (LSA)          fusion  4. two rankers beat one
    rerank  5. a second look at the top 20               losses  6. where the answers are lost

Each exhibit is `compute(bench, params) -> plain data`; bad parameters raise ConfigError
saying what was expected. `costly(bench, params)` is the part of its settings whose change
evaluates a split (the cost grows with the corpus and the split, not with one question): the
web app lets a link (GET) change those only with the server's token (issue 51.3). The web app
serves them under /lab (glassrag/web/lab.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from glassrag.lab import bm25, cuts, fusion, losses, lsa, rerank
from glassrag.lab.base import LabBench


@dataclass(frozen=True)
class Exhibit:
    number: int
    title: str
    summary: str
    compute: Callable[[LabBench, Mapping[str, str]], dict[str, Any]]
    params: frozenset[str]
    # the settings whose change evaluates `evaluates` (None: no setting costs more than a question)
    costly: Callable[[LabBench, Mapping[str, str]], Any] | None = None
    evaluates: str = ""


EXHIBITS: dict[str, Exhibit] = {
    "cuts": Exhibit(1, "Where the cuts land", "a chunker cuts the handbook; how many answers stay whole, "
                    "measured beside the closed forms", cuts.exhibit,
                    frozenset({"chunker", "unit", "size", "overlap", "split", "doc"}), cuts.costly,
                    "the chunker on the corpus and a split"),
    "bm25": Exhibit(2, "BM25 and the exact word", "per-word contributions, a k1 × b heat map of train "
                    "recall@5, test recall@5 once you commit", bm25.exhibit, frozenset({"k1", "b", "q", "commit"}),
                    bm25.costly, "BM25 on the train or test split"),
    "lsa": Exhibit(3, "Meaning from co-occurrence", "the LSA model: variance per dimension, a word's "
                   "nearest words, a 2-D map, where E-4107 and E-4170 land", lsa.exhibit,
                   frozenset({"dims", "view", "word", "a", "b"})),
    "fusion": Exhibit(4, "Two rankers beat one", "BM25, the embedding and their fusion on the test split, "
                      "question by question", fusion.exhibit, frozenset({"method", "k", "w", "depth", "pick"}),
                      fusion.costly, "the test split"),
    "rerank": Exhibit(5, "A second look at the top 20", "the learned reranker trained in place, its weights, "
                      "before and after by split; MMR and the outdated copy", rerank.exhibit,
                      frozenset({"l2", "mmr", "split", "q"}), rerank.costly,
                      "a reranker trained on the train split, on both splits"),
    "losses": Exhibit(6, "Where the answers are lost", "the whole pipeline on the test split: the reader's "
                      "accuracy beside its bound, a diagnosis per question, your runs compared", losses.exhibit,
                      frozenset({"k", "budget", "gate", "rerank", "a", "b"}), losses.settings, "the test split"),
}

__all__ = ["EXHIBITS", "Exhibit", "LabBench"]
