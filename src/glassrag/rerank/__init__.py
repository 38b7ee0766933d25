"""After retrieval: version preference, reranking (learned, cross-encoder), MMR, the cap."""
