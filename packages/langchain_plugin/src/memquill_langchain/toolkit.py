"""The memory tools of one session, as a LangChain toolkit."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool, BaseToolkit
from pydantic import ConfigDict, PrivateAttr

from memquill import MemorySession, MemoryToolset, open_session
from memquill.enhance import TextModel
from memquill.semantic import Embedder
from memquill.tools import Access
from memquill_langchain.embeddings import EmbeddingsEmbedder
from memquill_langchain.model import ChatModelTextModel
from memquill_langchain.retriever import FileType, MemquillRetriever
from memquill_langchain.tools import MemquillTool

__all__ = ["MemquillToolkit"]


class MemquillToolkit(BaseToolkit):
    """memquill's six memory tools for one session (the three read tools for read access).

    The host, never the model, decides the session: its workspace, its trusted id and its
    access. Write tools ask ``session.write_allowed()`` again at every call, so switching the
    host to a read-only mode (Plan mode) later refuses writes without rebuilding the tools.

    Example::

        toolkit = MemquillToolkit.from_workspace("/home/me/notes", session_id="chat-42")
        agent = create_agent(model, toolkit.get_tools(), system_prompt=toolkit.system_prompt())

    Attributes:
        session: who calls, on which workspace, with which access.
    """

    # Unknown keyword arguments are refused rather than silently ignored.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    session: MemorySession
    _toolset: MemoryToolset = PrivateAttr()
    _tools: tuple[MemquillTool, ...] = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Bind the core's tools to the session once; every tool shares one query cache."""
        self._toolset = MemoryToolset(self.session)
        self._tools = tuple(MemquillTool.from_memory_tool(tool) for tool in self._toolset.tools)

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        session_id: str | None = None,
        access: Access = "read_write",
        authorize_write: Callable[[], bool] | None = None,
        model: BaseChatModel | TextModel | None = None,
        *,
        store: str | None = None,
        embeddings: Embeddings | Embedder | None = None,
    ) -> MemquillToolkit:
        """Build the toolkit and its session in one call (:func:`memquill.open_session`, so
        every installed plugin's secret detectors guard the writes).

        Args:
            workspace: absolute path of the workspace folder.
            session_id: the host's trusted conversation id; writes need one.
            access: ``read`` (search, get, recent) or ``read_write`` (all six tools).
            authorize_write: asked at every write; return ``False`` to refuse (Plan mode).
            model: a chat model (or any :class:`memquill.enhance.TextModel`) to re-rank
                ``memory_search`` candidates with; keyword order without one
                (``docs/model-assistance.md``).
            store: where the records live: ``file`` or a ``postgresql://`` URL (default
                ``$MEMQUILL_STORE``, else the workspace's ``memory/records.md``).
            embeddings: an ``Embeddings`` (or any :class:`memquill.semantic.Embedder`) for semantic
                recall: search re-orders its keyword candidates by similarity
                (``docs/ranking.md``). Not with ``model``.

        Raises:
            ValueError: ``access`` is neither ``read`` nor ``read_write``, or both a
                ``model`` and ``embeddings``.
        """
        text_model = ChatModelTextModel(model) if isinstance(model, BaseChatModel) else model
        embedder = (
            EmbeddingsEmbedder(embeddings) if isinstance(embeddings, Embeddings) else embeddings
        )
        session = open_session(
            workspace,
            session_id,
            access,
            authorize_write,
            model=text_model,
            store=store,
            embedder=embedder,
        )
        return cls(session=session)

    @property
    def toolset(self) -> MemoryToolset:
        """The core toolset the LangChain tools call."""
        return self._toolset

    def get_tools(self) -> list[BaseTool]:
        """The mounted tools, in the core's catalogue order (read tools first)."""
        return list(self._tools)

    def system_prompt(self) -> str:
        """The core's instructions for exactly the tools mounted here (English)."""
        return self._toolset.system_prompt()

    def as_retriever(
        self, *, k: int = 5, filter_tags: Sequence[str] = (), file_type: FileType = "all"
    ) -> MemquillRetriever:
        """A retriever over the same workspace, sharing the tools' document cache (and the
        session's semantic ranking, when it has one).

        Args:
            k: how many documents to return (the core's search ``limit``, 1–20).
            filter_tags: keep only notes with any of these tags.
            file_type: ``all``, ``daily``, ``longterm`` or ``notes``.
        """
        return MemquillRetriever(
            memory=self._toolset.query,
            k=k,
            filter_tags=tuple(filter_tags),
            file_type=file_type,
            ranker=self.session.ranker,
        )
