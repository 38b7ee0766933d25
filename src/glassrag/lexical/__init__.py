"""Lexical retrieval: the analyzer and BM25."""

from glassrag.lexical.analyze import Analyzer
from glassrag.lexical.bm25 import BM25, TermCounts, top_k

__all__ = ["Analyzer", "BM25", "TermCounts", "top_k"]
