"""memquill search as a LlamaIndex retriever, for any query engine or pipeline.

Each core :class:`memquill.tools.RetrievedMemory` (:func:`memquill.tools.retrieve`) becomes one
``NodeWithScore`` in the core's order, with the core's score and metadata; the node text is the
hit's excerpt. The metadata the core marks private (rank, score, provenance, a record's id and
revision) stays in the node for code but is kept out of what an LLM or an embedding model
reads, because it is noise to a model and changes on every edit.

Search warnings (a skipped file, a scan budget reached, unreadable managed records) do not fail
a retrieval: the core logs them at ``WARNING`` on the ``memquill.retrieval`` logger.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from datetime import datetime

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from memquill import MemorySession, open_session
from memquill.query import FileType, MemoryQuery
from memquill.semantic import Embedder
from memquill.tools import RetrievedMemory, retrieve
from memquill_llamaindex.embedding import BaseEmbeddingEmbedder

__all__ = ["FileType", "MemquillRetriever"]


class MemquillRetriever(BaseRetriever):
    """Retrieves memquill search hits as nodes, best first.

    A retrieval with no hits returns ``[]``. A failed search raises the core's
    :class:`memquill.MemquillError` subclass with the core's message: for example
    :class:`memquill.InvalidInputError` for an empty query or a ``similarity_top_k`` below 1.
    Above 20 (:data:`memquill.query.MAX_SEARCH_LIMIT`) it returns the 20 best: memquill's
    search gives no more.

    Args:
        session: the session whose workspace to search (its ranker orders the hits: a
            :class:`memquill.semantic.SemanticRanker` for semantic recall).
        query: a query engine to share with other memquill components (one is created, with
            its document cache, if omitted).
        similarity_top_k: how many hits to return at most (at least 1; above 20, 20).
        tags: keep only notes with any of these tags (``#`` and case ignored).
        file_type: ``all``, ``daily``, ``longterm`` (including remembered facts) or ``notes``.
        callback_manager: LlamaIndex callbacks.
        verbose: LlamaIndex's verbose flag.
    """

    def __init__(
        self,
        session: MemorySession,
        *,
        query: MemoryQuery | None = None,
        similarity_top_k: int = 5,
        tags: Sequence[str] = (),
        file_type: FileType = "all",
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.query = query or session.query
        """The core query engine searched."""
        self.ranker = session.ranker
        """What re-orders the keyword candidates (``None``: keyword order)."""
        self.similarity_top_k = similarity_top_k
        self.tags: tuple[str, ...] = tuple(tags)
        self.file_type: FileType = file_type
        # BaseRetriever types its unused object_map as a bare Dict.
        super().__init__(callback_manager=callback_manager, verbose=verbose)  # pyright: ignore[reportUnknownMemberType]

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        *,
        similarity_top_k: int = 5,
        tags: Sequence[str] = (),
        file_type: FileType = "all",
        now: Callable[[], datetime] | None = None,
        store: str | None = None,
        embed_model: BaseEmbedding | Embedder | None = None,
    ) -> MemquillRetriever:
        """A retriever over ``workspace`` with a read-only session of its own.

        Args:
            workspace: absolute path of the workspace folder.
            similarity_top_k: how many hits to return at most (at least 1; above 20, 20).
            tags: keep only notes with any of these tags.
            file_type: ``all``, ``daily``, ``longterm`` or ``notes``.
            now: the clock recency is measured from (UTC); injectable for tests.
            store: where the records live: ``file`` or a ``postgresql://`` URL (default
                ``$MEMQUILL_STORE``, else the workspace's ``memory/records.md``).
            embed_model: a ``BaseEmbedding`` (or any :class:`memquill.semantic.Embedder`) for
                semantic recall (``docs/ranking.md``); keyword order without.
        """
        embedder = (
            BaseEmbeddingEmbedder(embed_model)
            if isinstance(embed_model, BaseEmbedding)
            else embed_model
        )
        session = open_session(workspace, access="read", now=now, store=store, embedder=embedder)
        return cls(session, similarity_top_k=similarity_top_k, tags=tags, file_type=file_type)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        found = retrieve(
            self.query,
            query_bundle.query_str,
            limit=self.similarity_top_k,
            tags=self.tags,
            file_type=self.file_type,
            ranker=self.ranker,
        )
        return [_node(memory) for memory in found]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # The search reads files: keep it off the event loop.
        return await asyncio.to_thread(self._retrieve, query_bundle)


def _node(memory: RetrievedMemory) -> NodeWithScore:
    hidden = list(memory.private_keys)
    node = TextNode(
        id_=memory.id,
        text=memory.text,
        metadata=dict(memory.metadata),
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
    return NodeWithScore(node=node, score=memory.score)
