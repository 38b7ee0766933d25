"""The learned reranker: L2-regularised logistic regression over FEATURES.

    p(relevant | x) = σ(w · z + c),   z = (x − μ) / s
    minimise  (1/n) Σ_i log(1 + exp(−y_i (w · z_i + c))) + (λ / 2n) ‖w‖²,   y ∈ {−1, +1}

μ and s are the training rows' mean and standard deviation (s = 1 where a feature is
constant). λ = 1 (scikit-learn's default C = 1). Trained on the golden set's train split
only: one row per candidate in each question's top `pool`, labelled by the relevance
judge; unanswerable questions give negatives. The model is stored in the index
(`extra.reranker`) with its weights, so `glassrag rerank-train` can show them.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from glassrag.errors import ConfigError
from glassrag.query import Query
from glassrag.rerank.features import FEATURES, FeatureMaker
from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import ListStage


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0,
                 sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Weights and bias of L2 logistic regression (bias not penalised), by L-BFGS:
    minimises Σ_i v_i log(1 + exp(−y_i (w·x_i + c))) / n + l2/(2n) |w|² with sample weights
    v_i (all 1 when not given; they are scaled to mean 1)."""
    n, d = x.shape
    signs = np.where(y > 0, 1.0, -1.0)
    v = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64) * n / np.sum(sample_weight)

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, c = theta[:d], theta[d]
        margin = signs * (x @ w + c)
        value = (v * np.logaddexp(0.0, -margin)).mean() + l2 / (2 * n) * w @ w
        g = -v * signs * (1.0 / (1.0 + np.exp(margin)))  # d loss_i / d score_i
        grad_w = x.T @ g / n + l2 / n * w
        return float(value), np.append(grad_w, g.mean())

    from scipy.optimize import minimize  # here: an ask with a trained reranker never fits one

    result = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 500, "gtol": 1e-8})
    return result.x[:d], float(result.x[d])


def describe_score(name: str, params: Mapping[str, Any]) -> tuple[str, str]:
    return "learned reranker", (
        "The learned reranker's probability that this passage is relevant (a logistic regression "
        "fitted on the golden set's train split): a model estimate, not a guarantee that the "
        "answer is right.")


def trained(index: Any) -> bool:
    """Whether the learned reranker has been trained for `index` (glassrag rerank-train)."""
    return bool(index.extra.get("reranker"))


def made(index: Any, config: Any, bm25: Any) -> LearnedReranker:
    model = index.extra.get("reranker")
    if model is None:
        raise ConfigError("the learned reranker has not been trained for this index",
                          "train it first: glassrag rerank-train --index DIR --golden FILE")
    return LearnedReranker(model, FeatureMaker(index, bm25), config.rerank.pool, config.rerank.neighbours)


class LearnedReranker(ListStage):
    name = "rerank"
    kind = Kind.RERANK

    def __init__(self, model: dict[str, Any], features: FeatureMaker, pool: int = 20,
                 neighbours: int = 0) -> None:
        self.model = model
        self.features = features
        self.pool = pool
        self.neighbours = neighbours  # chunks each side of a shortlisted one that join it
        self.mean = np.asarray(model["mean"])
        self.std = np.asarray(model["std"])
        self.weights = np.asarray(model["weights"])
        self.bias = float(model["bias"])

    def params(self) -> dict[str, Any]:
        return {"method": "learned", "pool": self.pool, "neighbours": self.neighbours,
                "weights": dict(zip(self.model["features"], self.model["weights"])),
                "bias": self.bias}

    def score(self, query: Query, hits: list[Hit]) -> np.ndarray:
        z = (self.features.matrix(query, hits) - self.mean) / self.std
        return np.asarray(1.0 / (1.0 + np.exp(-(z @ self.weights + self.bias))), dtype=np.float64)

    def apply(self, query: Query, hits: list[Hit]) -> tuple[list[Hit], list[str]]:
        head, tail = hits[: self.pool], hits[self.pool:]
        if not head:
            return hits, []
        notes = []
        if self.neighbours:
            from glassrag.rerank.neighbours import with_neighbours

            size = len(head)
            head, tail = with_neighbours(self.features.index, head, tail, self.neighbours, self.name)
            notes.append(f"{len(head) - size} neighbouring chunk(s) joined the shortlist")
        probs = self.score(query, head)
        order = np.argsort(-probs, kind="stable")
        out = [Hit(head[i].chunk_id, float(probs[i]), r, self.name,
                   {**head[i].detail, "input_rank": head[i].rank})
               for r, i in enumerate(order, 1)]
        # beyond the pool, keep the input order below every reranked chunk
        out += [Hit(h.chunk_id, 0.0, len(out) + j, self.name, {**h.detail, "input_rank": h.rank})
                for j, h in enumerate(tail, 1)]
        return out, [f"reranked the top {len(head)}; scores are probabilities of relevance", *notes]


def train(rows: np.ndarray, labels: np.ndarray, l2: float = 1.0) -> dict[str, Any]:
    """Standardise on the training rows and fit; returns the storable model."""
    mean = rows.mean(axis=0)
    std = rows.std(axis=0)
    std[std == 0] = 1.0
    weights, bias = fit_logistic((rows - mean) / std, labels, l2)
    return {"features": list(FEATURES), "mean": mean.tolist(), "std": std.tolist(),
            "weights": weights.tolist(), "bias": bias, "l2": l2,
            "rows": int(len(labels)), "positives": int(labels.sum())}
