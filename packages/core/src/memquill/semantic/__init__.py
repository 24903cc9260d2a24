"""Optional semantic recall: the host's own embeddings re-rank keyword candidates, bounded.

Keyword ranking stays the default and the base. Given an :class:`Embedder` (the adapters make
one from a LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding`` or a LangGraph
``IndexConfig``; ``_embedder.FunctionEmbedder`` wraps a plain function), a session's search
re-orders its keyword top 20 by a low-weight mix with similarity and, where keyword search is thin
or not confident, lets the nearest documents join the keyword candidates (:class:`SemanticRanker`;
the rule and its constants are :mod:`memquill.semantic._hybrid`'s). Vectors live
in a cache beside the search index (``_vectors.VectorCache``), never the truth. Every embedder call
goes through the auxiliary runner (scene ``memory_embed``): a failure keeps keyword order and
says so in the rerank fallback line. memquill never downloads a model.
"""

from memquill.lazy import lazy_exports as _lazy_exports
from memquill.semantic._embedder import Embedder, EmbedKind, load_embedder
from memquill.semantic._ranker import SemanticRanker
from memquill.semantic._texts import similarities_blocking

__all__ = [
    "EmbedKind",
    "Embedder",
    "SemanticRanker",
    "load_embedder",
    "similarities_blocking",
]

_INTERNAL = {
    "vectors_path": "memquill.index._vectors_file",
    "BATCH": "memquill.semantic._ranker",
    "SEARCH_TIMEOUT": "memquill.semantic._ranker",
    "EmbedFunction": "memquill.semantic._embedder",
    "FunctionEmbedder": "memquill.semantic._embedder",
    "Similar": "memquill.semantic._ranker",
    "Unit": "memquill.semantic._ranker",
    "Vector": "memquill.semantic._embedder",
    "VectorCache": "memquill.semantic._vectors",
    "check_vectors": "memquill.semantic._embedder",
    "similarities": "memquill.semantic._texts",
    "similarity_order": "memquill.semantic._texts",
    "similarity_order_blocking": "memquill.semantic._texts",
    "units_of": "memquill.semantic._ranker",
}
"""Names this facade serves but does not export: the core's own (what the parts above import)
and names that left its public list. Outside memquill they resolve with a
``DeprecationWarning``, until they are removed."""

__getattr__, __dir__ = _lazy_exports(__name__, _INTERNAL)
