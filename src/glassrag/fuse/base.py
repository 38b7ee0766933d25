"""What the fusion methods share: collecting each input's rank and score per chunk, and the
scores an input declares (glassrag/stage.py `StageOutput.scores`) or its list tells."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar, Mapping, Sequence

from glassrag.schema import Hit
from glassrag.schema.kind import Kind
from glassrag.stage import ScoreSource, StageOutput, listed_scores

__all__ = ["Fuser", "ScoreSource", "collect", "keep_firsts", "listed_scores", "ranked", "sources"]


@dataclass
class Fuser:
    """What every fusion method is as a stage: the stage "fuse", whose params are its method's
    name and its fields (the settings it was made with), in their declared order."""

    name: ClassVar[str] = "fuse"
    kind: ClassVar[Kind] = Kind.FUSE
    method: ClassVar[str]

    @classmethod
    def configured(cls, index: Any, config: Any, bm25: Any) -> Any:
        """Made from the `[fuse]` settings named as its fields, over retrieve.depth hits."""
        given = {f.name: getattr(config.fuse, f.name) for f in fields(cls) if hasattr(config.fuse, f.name)}
        return cls(**{**given, "depth": config.retrieve.depth})  # every method has a depth

    def params(self) -> dict[str, Any]:
        return {"method": self.method, **asdict(self)}


def sources(inputs: Mapping[str, StageOutput]) -> dict[str, ScoreSource]:
    """Each input's declared scores, or its list's."""
    return {name: out.scores if out.scores is not None else listed_scores(out.hits)
            for name, out in inputs.items()}


def collect(inputs: dict[str, list[Hit]], depth: int) -> dict[str, dict[str, dict[str, Any]]]:
    """chunk id → {input stage: {"rank", "score"}} over each input's top `depth` hits,
    in first-seen order (inputs in the order given, each best first)."""
    seen: dict[str, dict[str, dict[str, Any]]] = {}
    for stage, hits in inputs.items():
        for hit in hits[:depth]:
            seen.setdefault(hit.chunk_id, {})[stage] = {"rank": hit.rank, "score": hit.score}
    return seen


def ranked(name: str, scores: dict[str, float],
           detail: dict[str, dict[str, dict[str, Any]]]) -> list[Hit]:
    """Hits sorted by fused score, ties kept in first-seen order; ranks start at 1."""
    order = sorted(scores, key=lambda cid: -scores[cid])
    return [Hit(cid, float(scores[cid]), rank, name, {"inputs": detail[cid]})
            for rank, cid in enumerate(order, 1)]


def keep_firsts(hits: list[Hit], inputs: Mapping[str, Sequence[Hit]], floor: int) -> list[Hit]:
    """The fused list with every input's first hit at rank `floor` or better (`fuse.keep_first`;
    0 leaves the list as it is). Issue 47: BM25 ranked an answer first, MiniLM 87th, and the
    fusion put it 11th, out of the five shown; a first place is the one rank every retriever is
    surest of.

    The others keep their fused order; a first place below `floor` moves up just far enough
    (several of them keep their fused order among themselves, and take the places just above
    `floor` only when they must). A moved hit's score becomes the score of the hit it now
    stands above, max(own, next), so the list's scores stay non-increasing; its own fused
    score and rank are kept in its detail (`kept_first`)."""
    if floor <= 0 or not hits:
        return hits
    firsts = {h[0].chunk_id for h in inputs.values() if h}
    chosen = [h for h in hits if h.chunk_id in firsts]
    others = [h for h in hits if h.chunk_id not in firsts]
    order: list[Hit] = []
    i = j = 0
    while i < len(others) or j < len(chosen):
        waiting = len(chosen) - j  # first places not yet placed
        must = waiting > floor - (len(order) + 1)  # fewer places left above the floor than first places
        if j < len(chosen) and (i >= len(others) or chosen[j].rank < others[i].rank or must):
            order.append(chosen[j])
            j += 1
        else:
            order.append(others[i])
            i += 1
    out: list[Hit] = []
    below = float("-inf")
    for new_rank, hit in reversed(list(enumerate(order, 1))):
        score = hit.score
        detail = hit.detail
        if new_rank < hit.rank:
            score = max(hit.score, below)
            detail = {**hit.detail, "kept_first": {"fused_score": hit.score, "fused_rank": hit.rank}}
        out.append(Hit(hit.chunk_id, score, new_rank, hit.stage, detail))
        below = score
    return out[::-1]
