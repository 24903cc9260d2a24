"""Optional semantic recall: the host's own embeddings re-rank keyword candidates, bounded.

Keyword ranking stays the default and the base. Given an :class:`Embedder` (the adapters make
one from a LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding`` or a LangGraph
``IndexConfig``; :class:`FunctionEmbedder` wraps a plain function), a session's search re-orders
its keyword top 20 by a low-weight mix with similarity and, where keyword search is thin or
not confident, lets the nearest documents join the keyword candidates (:class:`SemanticRanker`;
the rule and its constants are :mod:`memquill.semantic._hybrid`'s). Vectors live
in a cache beside the search index (:class:`VectorCache`), never the truth. Every embedder call
goes through the auxiliary runner (scene ``memory_embed``): a failure keeps keyword order and
says so in the rerank fallback line. memquill never downloads a model.
"""

from memquill.index import vectors_path
from memquill.semantic._callable import EmbedFunction, FunctionEmbedder
from memquill.semantic._embedder import Embedder, EmbedKind, Vector, check_vectors
from memquill.semantic._load import load_embedder
from memquill.semantic._ranker import BATCH, SEARCH_TIMEOUT, SemanticRanker, Similar
from memquill.semantic._texts import (
    similarities,
    similarities_blocking,
    similarity_order,
    similarity_order_blocking,
)
from memquill.semantic._units import Unit, units_of
from memquill.semantic._vectors import VectorCache

__all__ = [
    "BATCH",
    "SEARCH_TIMEOUT",
    "EmbedFunction",
    "EmbedKind",
    "Embedder",
    "FunctionEmbedder",
    "SemanticRanker",
    "Similar",
    "Unit",
    "Vector",
    "VectorCache",
    "check_vectors",
    "load_embedder",
    "similarities",
    "similarities_blocking",
    "similarity_order",
    "similarity_order_blocking",
    "units_of",
    "vectors_path",
]
