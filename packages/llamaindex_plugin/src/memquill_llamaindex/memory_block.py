"""memquill memory as a block of LlamaIndex's ``Memory``: what an agent sees, and what it learns.

``Memory.aget()`` asks each block for content and puts it in the system message (or the latest
user message). This block returns the core's own texts as separate text blocks: the review of
recent memory (``memory_recent``) and, when the latest user message matches anything, the
search results for it (``memory_search``). Nothing is reworded or reformatted here.

Given an :class:`~memquill.lifecycle.Extraction` (:meth:`MemquillMemoryBlock.with_extraction`
builds one on the ``Memory``'s chat store), the block also feeds automatic extraction: the turns
``Memory`` flushes out of short-term memory are recorded as committed turns, and the runner
extracts every third turn's facts in the background, on the agent's event loop, without
delaying it. :meth:`MemquillMemoryBlock.arecord_session` records a whole session at once (a
conversation that ended before anything was flushed). Without an extraction the block never
writes: saving stays explicit, through the ``memory_remember`` tool and its receipt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, Final

from llama_index.core.base.llms.types import ChatMessage, ContentBlock, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms import LLM
from llama_index.core.memory.memory import BaseMemoryBlock
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore

from memquill import MemorySession, MemoryToolset, MemquillError
from memquill.enhance import TextModel
from memquill.lifecycle import Extraction, PassReport, SessionGate, committed_turns
from memquill.query import MemoryQuery
from memquill.tools import memory_context
from memquill_llamaindex.history import ChatStoreSource, to_source_messages
from memquill_llamaindex.model import LLMTextModel

__all__ = ["MemquillMemoryBlock"]

_LOG: Final = logging.getLogger("memquill.llamaindex")


class MemquillMemoryBlock(BaseMemoryBlock[list[ContentBlock]]):
    """Injects memquill's recent memory and search hits; with an extraction, learns from
    the turns ``Memory`` flushes.

    Use it in ``Memory.from_defaults(memory_blocks=[MemquillMemoryBlock(session=session)])``.

    Attributes:
        session: the session whose workspace to read (read access is enough).
        query: a query engine to share with other memquill components (one is created, with
            its document cache, if omitted).
        days: how many recent daily files the review includes (1–7).
        search_limit: how many search hits to add for the latest user message (0: none).
        extraction: automatic extraction fed by flushed turns (``None``: the block never
            writes). Its source must be a :class:`~memquill_llamaindex.ChatStoreSource` on the
            ``Memory``'s own chat store.
    """

    name: str = Field(default="memquill", description="The block's name (its template tag).")
    description: str | None = Field(
        default="Recent memquill memory, and search hits for the latest user message.",
        description="A description of the memory block.",
    )
    accept_short_term_memory: bool = Field(
        default=True,
        description="Flushed turns feed automatic extraction (when an extraction is given).",
    )
    session: MemorySession = Field(exclude=True, description="The memquill session.")
    query: MemoryQuery | None = Field(
        default=None, exclude=True, description="A query engine to share."
    )
    days: int = Field(default=3, ge=1, le=7, description="Recent daily files to include.")
    search_limit: int = Field(
        default=5, ge=0, le=20, description="Search hits for the latest user message."
    )
    extraction: Extraction | None = Field(
        default=None, exclude=True, description="Automatic extraction fed by flushed turns."
    )

    _toolset: MemoryToolset = PrivateAttr()
    _tasks: set[asyncio.Task[PassReport]] = PrivateAttr(
        default_factory=set[asyncio.Task[PassReport]]
    )

    def model_post_init(self, context: Any, /) -> None:
        """Bind the tools once, so their document cache lives as long as the block."""
        self._toolset = MemoryToolset(self.session, query=self.query)
        if self.extraction is not None and not isinstance(self.extraction.source, ChatStoreSource):
            raise ValueError("the extraction's source must be a ChatStoreSource")

    @classmethod
    def with_extraction(
        cls,
        session: MemorySession,
        chat_store: AsyncDBChatStore,
        model: LLM | TextModel | None,
        *,
        gate: SessionGate | None = None,
        **fields: Any,
    ) -> MemquillMemoryBlock:
        """A block whose flushed turns feed extraction with ``model`` (a LlamaIndex ``LLM`` or a
        memquill ``TextModel``), reading messages from ``chat_store``: give the same store to
        ``Memory.from_defaults(chat_store=...)``.

        ``session`` must be able to write (open it with :func:`memquill.open_session`).
        """
        text_model = LLMTextModel(model) if isinstance(model, LLM) else model
        source = ChatStoreSource(chat_store)
        extraction = Extraction(session, source, model=text_model, gate=gate)
        return cls(session=session, extraction=extraction, **fields)

    async def _aget(
        self, messages: list[ChatMessage] | None = None, **block_kwargs: Any
    ) -> list[ContentBlock]:
        # The core reads files: keep it off the event loop.
        return await asyncio.to_thread(self.content, messages or [])

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Record the flushed turns for extraction (nothing without an extraction)."""
        if self.extraction is None or not messages:
            return
        session_id = messages[0].additional_kwargs.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            return
        start = await self._position(session_id, messages)
        if start is None:
            _LOG.warning("extraction: flushed messages not found in the chat store")
            return
        flushed = to_source_messages(messages, start=start)
        await self._record(session_id, committed_turns(session_id, flushed))

    async def atruncate(
        self, content: list[ContentBlock], tokens_to_truncate: int
    ) -> list[ContentBlock] | None:
        """Drop the search hits first, then the whole block."""
        return content[:1] if len(content) > 1 else None

    def content(self, messages: Sequence[ChatMessage]) -> list[ContentBlock]:
        """The block's content for ``messages``: the recent review, then any search hits.

        Args:
            messages: the conversation so far; the last user message is searched for.
        """
        texts = memory_context(
            self._toolset,
            _latest_user_text(messages),
            days=self.days,
            limit=self.search_limit,
        )
        return [TextBlock(text=text) for text in texts]

    async def arecord_session(self, session_id: str, *, flush: bool = True) -> bool:
        """Record every finished turn of ``session_id`` now; with ``flush``, also close its
        last partial batch (the conversation ended). ``True`` when a batch was closed."""
        if self.extraction is None:
            return False
        source = self._source()
        history = to_source_messages(await source.history(session_id))
        closed = await self._record(session_id, committed_turns(session_id, history))
        if flush:
            try:
                closed = await asyncio.to_thread(self.extraction.flush, session_id) or closed
            except MemquillError as error:
                _LOG.warning("MEMORY_JOB_ENQUEUE_FAILED: %s", error.code)
            self._resume()
        return closed

    async def drain(self) -> None:
        """Wait for the extraction passes this block started (before the event loop ends)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    # -- internals -------------------------------------------------------------------------

    def _source(self) -> ChatStoreSource:
        assert self.extraction is not None
        source = self.extraction.source
        assert isinstance(source, ChatStoreSource)
        return source

    async def _position(self, session_id: str, flushed: list[ChatMessage]) -> int | None:
        """Where the flushed run sits in the session's history: the newest archived ones."""
        source = self._source()
        history = await source.history(session_id)
        start = await source.archived(session_id) - len(flushed)
        candidates = [start, *range(len(history) - len(flushed), -1, -1)]
        for position in candidates:
            window = history[position : position + len(flushed)]
            if (
                position >= 0
                and len(window) == len(flushed)
                and all(
                    (a.role, a.content) == (b.role, b.content)
                    for a, b in zip(window, flushed, strict=True)
                )
            ):
                return position
        return None

    async def _record(self, session_id: str, turns: Sequence[Any]) -> bool:
        assert self.extraction is not None
        closed = False
        for turn in turns:
            try:
                closed = await asyncio.to_thread(self.extraction.enqueue, turn) or closed
            except MemquillError as error:
                _LOG.warning("MEMORY_JOB_ENQUEUE_FAILED: %s", error.code)
                return closed
        if turns:
            self._resume()
        return closed

    def _resume(self) -> None:
        assert self.extraction is not None
        task = asyncio.get_running_loop().create_task(self.extraction.aresume())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _latest_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == MessageRole.USER:
            return (message.content or "").strip()
    return ""
