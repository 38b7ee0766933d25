"""Dense retrieval: the embedder interface, LSA, exact cosine search."""

from glassrag.dense.base import Embedder, normalize_rows
from glassrag.dense.exact import ExactCosine
from glassrag.dense.lsa import LSA, randomized_svd

__all__ = ["Embedder", "ExactCosine", "LSA", "normalize_rows", "randomized_svd"]
