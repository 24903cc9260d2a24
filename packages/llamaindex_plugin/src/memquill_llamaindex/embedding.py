"""A LlamaIndex ``BaseEmbedding`` as memquill's :class:`~memquill.semantic.Embedder`, for optional
semantic recall::

    from llama_index.embeddings.openai import OpenAIEmbedding
    from memquill_llamaindex import MemquillRetriever

    retriever = MemquillRetriever.from_workspace("/home/me/notes", embed_model=OpenAIEmbedding())

Queries go to ``aget_query_embedding``, documents to ``aget_text_embedding_batch``. The
identity is ``llamaindex:<class>/<model_name>`` with every simple setting (keys with their real
value) as the fingerprint material, so a new model or key rebuilds the cached vectors.
Provider exceptions are raised unchanged for memquill to classify.
"""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.embeddings.base import BaseEmbedding

from memquill.enhance import ModelIdentity

__all__ = ["BaseEmbeddingEmbedder"]


class BaseEmbeddingEmbedder:
    """A LlamaIndex ``BaseEmbedding`` as a memquill embedder (loop-bound, like the LLM adapter).

    Args:
        model: the embedding model.
        dims: the vectors' length, if known.
    """

    loop_bound = True
    """Called on the caller's event loop: the model's async client belongs there."""

    def __init__(self, model: BaseEmbedding, *, dims: int | None = None) -> None:
        self.model = model
        self._dims = dims

    @property
    def identity(self) -> ModelIdentity:
        """``llamaindex:<class>/<model_name>``; the settings are the secret material."""
        model = self.model
        name = f"{type(model).__name__}/{model.model_name}"
        return ModelIdentity.from_settings("llamaindex", name, model)

    @property
    def dims(self) -> int | None:
        """The vectors' length, if given."""
        return self._dims

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        """``aget_query_embedding`` for a query, ``aget_text_embedding_batch`` for documents."""
        if kind == "query":
            return [await self.model.aget_query_embedding(text) for text in texts]
        return await self.model.aget_text_embedding_batch(list(texts))

    def __repr__(self) -> str:
        return f"BaseEmbeddingEmbedder({type(self.model).__name__})"
