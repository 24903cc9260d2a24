"""A LangChain ``Embeddings`` (or a LangGraph ``IndexConfig``'s ``embed``) as memquill's
:class:`~memquill.semantic.Embedder`, for optional semantic recall::

    from langchain_openai import OpenAIEmbeddings
    from memquill_langchain import MemquillToolkit

    toolkit = MemquillToolkit.from_workspace(
        "/home/me/notes", session_id="chat-42", embeddings=OpenAIEmbeddings()
    )

Queries go to ``aembed_query``, documents to ``aembed_documents``. The identity is
``langchain:<class>/<model name>`` with every simple setting (keys with their real value) as
the fingerprint material, exactly as for a chat model, so a new model or key rebuilds the cached
vectors. A LangGraph ``embed`` (an ``Embeddings``, a function of a list of texts, sync or async,
or a ``"provider:model"`` string) is turned into one with LangGraph's own
``ensure_embeddings``. Provider exceptions are raised unchanged for memquill to classify.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from langchain_core.embeddings import Embeddings

from memquill.enhance import ModelIdentity

__all__ = ["EmbeddingsEmbedder", "embedder_from_index"]

_NAME_FIELDS: Final = ("model_name", "model", "model_id", "deployment_name")


class EmbeddingsEmbedder:
    """A LangChain ``Embeddings`` as a memquill embedder.

    Loop-bound (``loop_bound = True``) like the chat model adapter: its async client belongs
    to the caller's loop; LangChain runs a sync-only implementation in an executor.

    Args:
        embeddings: the embedding model.
        dims: the vectors' length, if known.
        name: the identity's name (default: the class and its model name).
    """

    loop_bound = True
    """Called on the caller's event loop (see the class doc)."""

    def __init__(
        self, embeddings: Embeddings, *, dims: int | None = None, name: str | None = None
    ) -> None:
        self.embeddings = embeddings
        self._dims = dims
        self._name = name

    @property
    def identity(self) -> ModelIdentity:
        """``langchain:<class>/<model name>``; the settings are the secret material."""
        model = self.embeddings
        name = self._name or type(model).__name__
        for field in _NAME_FIELDS:
            value = getattr(model, field, None)
            if self._name is None and isinstance(value, str) and value:
                name = f"{name}/{value}"
                break
        settings: Any = model if hasattr(type(model), "model_fields") else vars(model)
        return ModelIdentity.from_settings("langchain", name, settings)

    @property
    def dims(self) -> int | None:
        """The vectors' length, if given."""
        return self._dims

    async def embed(self, texts: Sequence[str], *, kind: str) -> list[list[float]]:
        """``aembed_query`` for a query, ``aembed_documents`` for documents."""
        if kind == "query":
            return [await self.embeddings.aembed_query(text) for text in texts]
        return await self.embeddings.aembed_documents(list(texts))

    def __repr__(self) -> str:
        return f"EmbeddingsEmbedder({type(self.embeddings).__name__})"


def embedder_from_index(index: object) -> EmbeddingsEmbedder:
    """The embedder of a LangGraph ``IndexConfig`` (``{"embed": ..., "dims": ..., ...}``).

    Raises:
        ValueError: ``index`` is not a mapping with an ``embed``.
    """
    from langgraph.store.base.embed import ensure_embeddings

    if not isinstance(index, dict) or "embed" not in index:
        raise ValueError('an index needs an "embed" (an Embeddings, or a function of texts)')
    config: dict[str, Any] = index  # pyright: ignore[reportUnknownVariableType]
    embed = config["embed"]
    dims = config.get("dims")
    name = None if isinstance(embed, Embeddings) else _function_name(embed)
    return EmbeddingsEmbedder(
        ensure_embeddings(embed), dims=dims if isinstance(dims, int) else None, name=name
    )


def _function_name(embed: object) -> str:
    if isinstance(embed, str):
        return embed
    module = getattr(embed, "__module__", None) or type(embed).__module__
    qualified = getattr(embed, "__qualname__", None) or type(embed).__qualname__
    return f"{module}.{qualified}"
