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

from __future__ import annotations

import typing

from memquill.lazy import lazy_exports as _lazy_exports
from memquill.semantic._embedder import Embedder, load_embedder
from memquill.semantic._ranker import SemanticRanker

if typing.TYPE_CHECKING:
    from memquill.index import vectors_path as vectors_path
    from memquill.semantic._embedder import (
        EmbedFunction as EmbedFunction,
        EmbedKind as EmbedKind,
        FunctionEmbedder as FunctionEmbedder,
        Vector as Vector,
        check_vectors as check_vectors,
    )
    from memquill.semantic._ranker import (
        BATCH as BATCH,
        SEARCH_TIMEOUT as SEARCH_TIMEOUT,
        Similar as Similar,
        Unit as Unit,
        units_of as units_of,
    )
    from memquill.semantic._texts import (
        similarities as similarities,
        similarities_blocking as similarities_blocking,
        similarity_order as similarity_order,
        similarity_order_blocking as similarity_order_blocking,
    )
    from memquill.semantic._vectors import VectorCache as VectorCache

__all__ = [
    "Embedder",
    "SemanticRanker",
    "load_embedder",
]

__getattr__, __dir__ = _lazy_exports(__name__)
