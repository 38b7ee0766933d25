"""glassrag: a retrieval pipeline for RAG built from visible parts, measured stage by stage."""

__version__ = "0.1.0"
