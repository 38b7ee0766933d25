"""Exhibit 3, meaning from co-occurrence: the index's LSA model (glassrag/dense/lsa.py) opened
up: the share of the corpus each dimension keeps, a word's nearest words, chunks or words
on the first two dimensions, and where two look-alike identifiers land.

    X ≈ U_k S_k V_kᵀ                      X: TF-IDF term × chunk matrix, unit-length columns
    variance share of dimension i = s_i² / ‖X‖_F²
    word vectors  = rows of U_k S_k       (cosine between words; stored as U_k S_k⁻¹, so × s_i²)
    chunk vectors = rows of V_k
    fold-in       q̂ = qᵀ U_k S_k⁻¹       (a question, or any text, placed like a chunk)

Using only the first `dims` dimensions shows how meaning blurs as the model shrinks. The
recall@5 shown is the LSA stage's of `glassrag eval` on the test split (the pipeline's own
LSA retriever, judged and measured as evaluate() does).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glassrag.errors import ConfigError
from glassrag.lab.base import LabBench, choice, means, number, qrels_of, retriever_rankings

NEAREST = 10
MAP_POINTS = 1500  # chunks drawn at most (evenly spaced in index order)
MAP_WORDS = 120  # the most widespread words drawn
PAIR = ("E-4107", "E-4170")


def _model(bench: LabBench) -> Any:
    if bench.index.lsa is None or not bench.index.lsa.vocab:
        raise ConfigError(f"index {bench.name!r} has no LSA model", "build it with [lsa] dim > 0 (the default)")
    return bench.index.lsa


def word_vectors(bench: LabBench) -> np.ndarray:
    """Rows of U_k S_k for every word (from the stored U_k S_k⁻¹: × s_i², s_i² ∝ variance share)."""
    lsa = _model(bench)
    return bench.remember(("lsa-words",), lambda: np.asarray(lsa.term_vectors, dtype=np.float64)
                          * np.asarray(lsa.variance_share, dtype=np.float64))


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def nearest_words(bench: LabBench, word: str, dims: int) -> dict[str, Any]:
    """The words whose vectors (first `dims` dimensions) are nearest the word's by cosine."""
    lsa = _model(bench)
    tokens = [t for t in bench.index.analyzer(word) if t in lsa.vocab]
    if not tokens:
        return {"word": word, "token": None, "nearest": [],
                "problem": f"{word!r} is not in the model's vocabulary (after analysis: "
                           f"{' '.join(bench.index.analyzer(word)) or 'nothing'})"}
    token = tokens[0]
    vectors = word_vectors(bench)[:, :dims]
    terms = bench.remember(("lsa-terms",), lambda: {i: t for t, i in lsa.vocab.items()})
    sims = _unit(vectors) @ _unit(vectors[lsa.vocab[token]])
    order = np.argsort(-sims, kind="stable")
    out = [{"word": terms[int(i)], "cosine": float(sims[i])} for i in order[: NEAREST + 1]
           if int(i) != lsa.vocab[token]][:NEAREST]
    return {"word": word, "token": token, "nearest": out}


def pair(bench: LabBench, a: str, b: str, dims: int) -> dict[str, Any]:
    """Where two texts land when folded in: their cosine, map positions and nearest chunks."""
    lsa = _model(bench)
    folded = [lsa.embed_query(t)[:dims] for t in (a, b)]
    cosine = float(_unit(folded[0]) @ _unit(folded[1])) if all(np.any(f) for f in folded) else None
    chunks = _unit(np.asarray(lsa.passage_vectors[:, :dims], dtype=np.float64))
    rows = []
    for text, vec in zip((a, b), folded):
        sims = chunks @ _unit(vec)
        top = np.argsort(-sims, kind="stable")[:3] if np.any(vec) else []
        rows.append({"text": text, "tokens": [t for t in bench.index.analyzer(text) if t in lsa.vocab],
                     "x": float(vec[0]) if vec.size else 0.0, "y": float(vec[1]) if vec.size > 1 else 0.0,
                     "nearest": [{"chunk": bench.index.chunks[int(i)].id, "doc": bench.index.chunks[int(i)].doc_id,
                                  "locator": bench.index.chunks[int(i)].locator, "cosine": float(sims[i])}
                                 for i in top]})
    return {"a": rows[0], "b": rows[1], "cosine": cosine}


def points(bench: LabBench, view: str) -> list[dict[str, Any]]:
    """Chunks (coloured by document) or the most widespread words on dimensions 1 and 2."""
    lsa = _model(bench)
    if view == "words":
        freq = np.diff(bench.index.counts.tf.indptr)
        terms = {i: t for t, i in lsa.vocab.items()}
        top = np.argsort(-freq, kind="stable")[:MAP_WORDS]
        vectors = word_vectors(bench)
        return [{"x": float(vectors[i, 0]), "y": float(vectors[i, 1] if vectors.shape[1] > 1 else 0.0),
                 "label": terms[int(i)], "class": "word"} for i in top]
    n = len(bench.index.chunks)
    step = max(1, -(-n // MAP_POINTS))
    docs = {d: k for k, d in enumerate(sorted(bench.index.documents))}
    out = []
    for i in range(0, n, step):
        c = bench.index.chunks[i]
        v = lsa.passage_vectors[i]
        out.append({"x": float(v[0]), "y": float(v[1]) if v.size > 1 else 0.0,
                    "label": f"{c.doc_id} {c.locator}", "class": f"doc-{docs.get(c.doc_id, 0) % 8}"})
    return out


def test_recall(bench: LabBench) -> float | None:
    """The LSA stage's recall@5 on the test split, as `glassrag eval` measures it."""
    def compute() -> float | None:
        questions = bench.split("test")
        if not questions:
            return None
        config = bench.config(retrieve={"retrievers": ["bm25"], "observe": ["lsa"]})
        ranked = retriever_rankings(bench, config, questions, ["lsa"])["lsa"]
        return means(ranked, qrels_of(bench, questions), ["recall@5"])["recall@5"]

    return bench.remember(("lsa-recall",), compute)


def exhibit(bench: LabBench, params: Mapping[str, str]) -> dict[str, Any]:
    lsa = _model(bench)
    full = int(lsa.term_vectors.shape[1])
    dims = number(params, "dims", full, 2, full, whole=True)
    view = choice(params, "view", "chunks", ("chunks", "words"))
    word = (params.get("word") or "").strip()[:80] or _default_word(bench)
    near = nearest_words(bench, word, dims)
    default = PAIR if any(t in lsa.vocab for t in bench.index.analyzer(PAIR[0])) else (
        (near["token"], near["nearest"][0]["word"]) if near["nearest"] else PAIR)  # a corpus without the codes
    a = (params.get("a") or "").strip()[:80] or default[0]
    b = (params.get("b") or "").strip()[:80] or default[1]
    share = [float(v) for v in lsa.variance_share]
    return {"dims": dims, "model_dims": full, "view": view, "fitted_on": lsa.fitted_on,
            "variance": {"share": share[:40], "kept": float(sum(share)), "kept_here": float(sum(share[:dims])),
                         "first_two": float(sum(share[:2]))},
            "words": near, "pair": pair(bench, a, b, dims),
            "points": points(bench, view), "vocabulary": len(lsa.vocab), "chunks": len(bench.index.chunks),
            "test_recall": test_recall(bench) if bench.questions else None}


def _default_word(bench: LabBench) -> str:
    vocab = _model(bench).vocab
    return next((w for w in ("calibration", "battery", "laser", "cell", "protein") if w in vocab), next(iter(vocab)))
