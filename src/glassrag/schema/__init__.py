"""The plain data that flows between stages: frozen dataclasses with to_dict/from_dict.

Document ─▶ Section (with its locator) ─▶ Chunk ─▶ Hit ─▶ StageTrace ─▶ Answer ─▶ Run.

corpus.py holds what an index is built from (Document, Section, Chunk, content hashes);
answer.py what one question's way leaves (Hit, StageTrace, Passage, Quote, Generation, Answer);
kind.py the kinds of stage (Kind: which rank, which score);
run.py the record of an evaluation (Run), whose whole shape run_shape.py checks on reading;
records.py what it keeps of each question (QuestionRecord, a StageRecord per stage);
metric.py what each of its metrics is (MetricSpec: 0/1 or graded, which way is better, k).
This package hands their names on, each module imported when one of its names is first asked
for: a question needs corpus.py and answer.py, and making the other modules' dataclasses cost
every `glassrag ask` about 20 ms (bench/startup.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glassrag.schema.answer import Answer, Generation, Hit, Passage, Quote, StageTrace
    from glassrag.schema.corpus import Chunk, Document, Section, _Plain, content_hash
    from glassrag.schema.kind import Kind
    from glassrag.schema.metric import MCNEMAR, RANDOMISATION, SPECS, MetricSpec, flat_spec, metric_spec
    from glassrag.schema.records import QuestionRecord, StageRecord
    from glassrag.schema.run import RUN_FORMAT, RUN_FORMAT_VERSION, Run, RunSection

MODULES = {
    "answer": ("Answer", "Generation", "Hit", "Passage", "Quote", "StageTrace"),
    "corpus": ("Chunk", "Document", "Section", "_Plain", "content_hash"),
    "kind": ("Kind",),
    "metric": ("MCNEMAR", "RANDOMISATION", "SPECS", "MetricSpec", "flat_spec", "metric_spec"),
    "records": ("QuestionRecord", "StageRecord"),
    "run": ("RUN_FORMAT", "RUN_FORMAT_VERSION", "Run", "RunSection"),
}
_WHERE = {name: module for module, names in MODULES.items() for name in names}

__all__ = ["MCNEMAR", "RANDOMISATION", "RUN_FORMAT", "RUN_FORMAT_VERSION", "SPECS",
           "Answer", "Chunk", "Document", "Generation", "Hit", "Kind", "MetricSpec", "Passage", "QuestionRecord", "Quote", "Run",
           "RunSection", "Section", "StageRecord", "StageTrace", "_Plain", "content_hash", "flat_spec", "metric_spec"]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'glassrag.schema' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"glassrag.schema.{module}"), name)
    globals()[name] = value
    return value
