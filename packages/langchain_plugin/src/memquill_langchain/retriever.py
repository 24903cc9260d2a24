"""memquill's keyword search as a LangChain retriever.

:class:`MemquillRetriever` returns the core's retrieval results
(:func:`memquill.tools.retrieve`), in the core's order, one
:class:`~langchain_core.documents.Document` per hit, with the core's metadata.
Nothing is re-ranked, filtered or reworded here.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memquill import open_session
from memquill.query import FileType, MemoryQuery
from memquill.semantic import Embedder
from memquill.tools import RetrievedMemory, retrieve

__all__ = ["FileType", "MemquillRetriever"]


class MemquillRetriever(BaseRetriever):
    """Retrieve memories (notes and remembered facts) for a query, best first.

    ``k``, ``filter_tags`` and ``file_type`` are set here and may be overridden per call:
    ``retriever.invoke("deploy day", k=3)``. ``k`` is the core's search ``limit``: above 20
    (:data:`memquill.query.MAX_SEARCH_LIMIT`) a call returns the 20 best, as a retriever
    returns fewer documents when fewer match; below 1 it raises
    :class:`~memquill.InvalidInputError` with the core's message.

    Each document has ``page_content`` = the hit's snippet (up to 300 characters of the best
    matching chunk; read the whole source with the ``memory_get`` tool), ``id`` = the record id
    for a remembered fact or ``"<path>#<line>"`` for a note, and ``metadata`` with ``source``
    (workspace path), ``line``, ``rank``, ``score``, ``heading``, ``kind`` (``note`` or
    ``record``), ``provenance`` (``workspace-file`` or the record's provenance line),
    ``record_id`` and ``record_revision`` (``None`` for notes; pass the revision to
    ``memory_update`` or ``memory_forget``). Search warnings (skipped files, partial scans,
    unreadable records) are logged on the ``memquill.retrieval`` logger.

    Attributes:
        memory: the core query engine (keep one per workspace: it caches analysed notes).
        ranker: re-orders the keyword candidates (a :class:`memquill.semantic.SemanticRanker` for
            semantic recall, as ``from_workspace(..., embeddings=...)`` makes); ``None``:
            keyword order.
        k: how many documents to return at most (20 at most, whatever is asked; at least 1).
        filter_tags: keep only notes with any of these tags (``#`` and case ignored).
        file_type: ``all``, ``daily``, ``longterm`` or ``notes``.
    """

    # Unknown keyword arguments are refused: a misspelt ``top_k`` must not pass silently.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: MemoryQuery
    ranker: Any = None
    k: int = 5
    filter_tags: tuple[str, ...] = ()
    file_type: FileType = "all"

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        *,
        store: str | None = None,
        embeddings: Embeddings | Embedder | None = None,
        **options: Any,
    ) -> MemquillRetriever:
        """A retriever with its own :class:`~memquill.query.MemoryQuery` over ``workspace``.

        Args:
            workspace: absolute path of the workspace folder.
            store: where the records live: ``file`` or a ``postgresql://`` URL (default
                ``$MEMQUILL_STORE``, else the workspace's ``memory/records.md``).
            embeddings: an ``Embeddings`` (or any :class:`memquill.semantic.Embedder`) for semantic
                recall (``docs/ranking.md``); keyword order without.
            **options: ``k``, ``filter_tags``, ``file_type`` and any ``BaseRetriever`` field.
        """
        from memquill_langchain.embeddings import EmbeddingsEmbedder

        embedder = (
            EmbeddingsEmbedder(embeddings) if isinstance(embeddings, Embeddings) else embeddings
        )
        session = open_session(workspace, access="read", store=store, embedder=embedder)
        return cls(memory=session.query, ranker=session.ranker, **options)

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        filter_tags: Sequence[str] | None = None,
        file_type: FileType | None = None,
    ) -> list[Document]:
        return self._search(query, k, filter_tags, file_type)

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        filter_tags: Sequence[str] | None = None,
        file_type: FileType | None = None,
    ) -> list[Document]:
        # The search reads files; a worker thread keeps the event loop free meanwhile.
        return await asyncio.to_thread(self._search, query, k, filter_tags, file_type)

    def _search(
        self,
        query: str,
        k: int | None,
        filter_tags: Sequence[str] | None,
        file_type: FileType | None,
    ) -> list[Document]:
        found = retrieve(
            self.memory,
            query,
            limit=self.k if k is None else k,
            tags=tuple(self.filter_tags if filter_tags is None else filter_tags),
            file_type=file_type or self.file_type,
            ranker=self.ranker,
        )
        return [_document(memory) for memory in found]


def _document(memory: RetrievedMemory) -> Document:
    return Document(id=memory.id, page_content=memory.text, metadata=dict(memory.metadata))
