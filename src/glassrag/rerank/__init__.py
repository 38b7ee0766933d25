"""Reranking and the stages around it. The rerankers are looked up by name in RERANKERS
(rerank.method); `none` runs none and `auto` chooses by the trained reranker's cross-validation
(`auto_reranker`). Versions, MMR and the cap are one-entry tables in their modules."""

from __future__ import annotations

from typing import Any

from glassrag.errors import ConfigError
from glassrag.rerank import cross_encoder, learned
from glassrag.stage import Entry

RERANKERS: dict[str, Entry] = {
    "learned": Entry(learned.made, learned.describe_score, learned.trained),
    "cross-encoder": Entry(cross_encoder.made, cross_encoder.describe_score),
}
METHODS = ("none", "auto", *RERANKERS)  # the choices of rerank.method


def chosen(method: str, model: dict[str, Any] | None) -> tuple[str, list[str]]:
    """The reranker `rerank.method` runs ("none" for none) and the notes of what `auto` decided."""
    if method not in METHODS:
        raise ConfigError(f"unknown rerank.method {method!r}", f"choose one of: {', '.join(METHODS)}")
    if method != "auto":
        return method, []
    method, why = auto_reranker(model)
    return method, ["rerank auto: " + why]


def auto_reranker(model: dict[str, Any] | None) -> tuple[str, str]:
    """What `rerank.method = auto` runs and why: the learned reranker only when its
    cross-validation on the train split shows it beats the order it is given
    (rerank/learned_cv.py); a model trained before that was recorded is not used."""
    from glassrag.rerank.learned_cv import summary

    if not model:
        return "none", "no reranker trained for this index (glassrag rerank-train)"
    cv = model.get("cv")
    if cv and cv.get("helps"):
        return "learned", "using the trained learned reranker: " + summary(cv)
    return "none", "not using the trained learned reranker: " + summary(cv)
