"""Stage outputs reused across the configurations of a sweep: a stage's output for a question
is computed once for each distinct (stage, parameters, input) and looked up after that.

    key(stage, question) = sha1(stage name, kind and params(), key of its input)

The input key chains back to the question: a retriever's input is the question on this
index; the stages after retrieval chain from the keys of every retriever that ran (answering
and observed) and the BM25 parameters (the reranker's features and the gate's signals read
BM25 scores whichever retrievers answer); each later stage from the key of the stage before
it. So a change of k1 re-runs BM25 and everything after it, never LSA; a change of the gate's
calibration decides again on the signals kept (the gate's measurement is cached apart from its
decision, glassrag/gate/stage.py), and what follows is reused when the decision's outcome is the
same; the analysis of a question is done once per analyzer.

A stage may leave numbers in the question's cache (`Query.cached`: every chunk's BM25
score, the dense vectors) for later stages to read; they are kept with its output and put
back when it is reused. The cache lives in memory for one sweep of one index; it is not
thread-safe (a pipeline with a cache runs its retrievers one after the other).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable


def digest(*parts: Any) -> str:
    """A stable key of JSON-able parts (sets and tuples as lists, other objects by str)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class StageCache:
    """key → stage output, with counts of reuse (`hits`) and computations (`misses`)."""

    def __init__(self, label: str = "") -> None:
        self.label = label  # the index it serves: keys of different indexes never meet
        self._outputs: dict[str, Any] = {}
        self._tokens: dict[str, list[str]] = {}
        self.hits = 0
        self.misses = 0

    def key(self, stage_id: str, *inputs: str | None) -> str:
        """The key of a stage (`stage_id`: a digest of its name, kind and params) given the
        keys of its inputs."""
        text = "\x1f".join([self.label, stage_id, *(i or "" for i in inputs)])
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def tokens(self, analyzer: dict[str, Any], question: str, analyze: Callable[[], list[str]]) -> list[str]:
        """The question's tokens, analysed once per analyzer."""
        key = digest(analyzer, question)
        if key not in self._tokens:
            self._tokens[key] = analyze()
        return list(self._tokens[key])

    def get(self, key: str) -> Any | None:
        found = self._outputs.get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: str, value: Any) -> None:
        self._outputs[key] = value

    def __len__(self) -> int:
        return len(self._outputs)

    def counts(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "stored": len(self._outputs)}
