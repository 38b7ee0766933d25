"""The pipeline: analyse → retrievers side by side → fuse → prefer current versions →
rerank → MMR → cap → gate → budget → answer → read, each optional but the first two,
with a trace of every stage. The trace is the single record the CLI prints, the UI
draws and the evaluator reads; nothing is re-run to explain it.

stages.py makes the configured list from the tables of stages (an index's: `tables`);
loop.py runs a question through it and writes the trace. The stage contract is
glassrag/stage.py.
"""

from glassrag.pipeline.loop import Pipeline
from glassrag.pipeline.stages import (RERANKERS, TABLES, ChunkDocs, ChunkTexts, Stage, auto_reranker, entry_of,
                                      tables)
from glassrag.retrieve import RETRIEVERS, retrievers

__all__ = ["RETRIEVERS", "RERANKERS", "TABLES", "ChunkDocs", "ChunkTexts", "Pipeline", "Stage", "auto_reranker",
           "entry_of", "retrievers", "tables"]
