"""memquill memory as a block of LlamaIndex's ``Memory``: what an agent sees before it answers.

``Memory.aget()`` asks each block for content and puts it in the system message (or the latest
user message). This block returns the core's own texts as separate text blocks: the review of
recent memory (``memory_recent``) and, when the latest user message matches anything, the
search results for it (``memory_search``). Nothing is reworded or reformatted here.

The block never writes. Saving stays explicit, through the ``memory_remember`` tool and its
receipt, so chat messages flushed out of short-term memory are not stored by default.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ContentBlock, MessageRole, TextBlock
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from memquill import MemoryQuery, MemorySession, MemoryToolset, memory_context

__all__ = ["MemquillMemoryBlock"]


class MemquillMemoryBlock(BaseMemoryBlock[list[ContentBlock]]):
    """Injects memquill's recent memory, and search hits for the latest user message.

    Use it in ``Memory.from_defaults(memory_blocks=[MemquillMemoryBlock(session=session)])``.

    Attributes:
        session: the session whose workspace to read (read access is enough).
        query: a query engine to share with other memquill components (one is created, with
            its document cache, if omitted).
        days: how many recent daily files the review includes (1–7).
        search_limit: how many search hits to add for the latest user message (0: none).
    """

    name: str = Field(default="memquill", description="The block's name (its template tag).")
    description: str | None = Field(
        default="Recent memquill memory, and search hits for the latest user message.",
        description="A description of the memory block.",
    )
    accept_short_term_memory: bool = Field(
        default=False,
        description="memquill saves only through its tools, never flushed chat messages.",
    )
    session: MemorySession = Field(exclude=True, description="The memquill session.")
    query: MemoryQuery | None = Field(
        default=None, exclude=True, description="A query engine to share."
    )
    days: int = Field(default=3, ge=1, le=7, description="Recent daily files to include.")
    search_limit: int = Field(
        default=5, ge=0, le=20, description="Search hits for the latest user message."
    )

    _toolset: MemoryToolset = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Bind the tools once, so their document cache lives as long as the block."""
        self._toolset = MemoryToolset(self.session, query=self.query)

    async def _aget(
        self, messages: list[ChatMessage] | None = None, **block_kwargs: Any
    ) -> list[ContentBlock]:
        # The core reads files: keep it off the event loop.
        return await asyncio.to_thread(self.content, messages or [])

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Nothing to store: memquill writes only through its tools."""

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


def _latest_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == MessageRole.USER:
            return (message.content or "").strip()
    return ""
