"""The kinds of stage, declared once (issue 50.1): what each kind of stage does to the list, and
so whether its list is a ranking and whether its scores are its own.

    ranks   its list is a ranking of the question's candidates: the last such stage before the
            gate is the ranking a run's `ranking` section, the gate's signals and the
            answerability model read, and the evaluator measures each
    scores  its scores are scores of relevance it computed (not the reordering, filtering or
            cutting of someone else's): the ask page explains them, the gate's signals read them

Every stage class declares its kind (`kind = Kind.RERANK`); a trace keeps it as its text
("rerank"), which `Kind(text)` reads back. A stage of a new kind adds a member here.
"""

from __future__ import annotations

from enum import StrEnum


class Kind(StrEnum):
    """A kind of stage, its name as the trace writes it, and whether it ranks and scores."""

    ranks: bool
    scores: bool

    def __new__(cls, name: str, ranks: bool = False, scores: bool = False) -> Kind:
        member = str.__new__(cls, name)
        member._value_ = name
        member.ranks = ranks
        member.scores = scores
        return member

    #          name        ranks  scores
    ANALYZE = "analyze", False, False  # the question's tokens
    RETRIEVE = "retrieve", True, True
    OBSERVE = "observe", False, False  # a retriever traced beside the fused ones, not fused
    FUSE = "fuse", True, True
    VERSIONS = "versions", True, False  # keeps the current version of a document
    FILTER = "filter", True, False  # the matter filter
    WINDOW = "window", True, True  # scores a chunk with its neighbours
    RERANK = "rerank", True, True
    MMR = "mmr", True, False  # reorders for diversity
    CAP = "cap", True, False  # cuts the list
    GATE = "gate", False, False  # passes the last ranking on, or declines
    BUDGET = "budget", False, False
    SELECT = "select", False, False  # the answer's passages
    READ = "read", False, False
    GENERATE = "generate", False, False

    @classmethod
    def of(cls, name: str) -> Kind | None:
        """The kind a trace calls `name`; None when there is no kind of that name."""
        try:
            return cls(name)
        except ValueError:
            return None

