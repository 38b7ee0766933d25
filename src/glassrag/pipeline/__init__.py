"""The pipeline: analyse → retrievers side by side → fuse → prefer current versions →
rerank → MMR → cap → gate → budget → answer → read, each optional but the first two,
with a trace of every stage. The trace is the single record the CLI prints, the UI
draws and the evaluator reads; nothing is re-run to explain it.

stages.py chooses the stages after retrieval from the settings; loop.py runs a question
through them all and writes the trace.
"""

from glassrag.pipeline.loop import Pipeline
from glassrag.pipeline.stages import RERANKERS, ChunkDocs, ChunkTexts, Stage, auto_reranker
from glassrag.retrieve import RETRIEVERS

__all__ = ["RETRIEVERS", "RERANKERS", "ChunkDocs", "ChunkTexts", "Pipeline", "Stage", "auto_reranker"]
