"""LlamaIndex chat messages as memquill sees them, and a chat store as their source.

memquill's automatic extraction keeps message ids only, and reads the messages again from the
chat store when it extracts a batch. LlamaIndex's ``ChatMessage`` has no id, so a message is
named by its position in its session's whole history in the store, ``m<index>`` (archived and
active messages together, oldest first, as ``Memory`` keeps them): an edited message keeps its
id and is seen as changed; a deleted one shifts the rest and they stop matching, so nothing is
saved from them. The store key (``Memory.session_id``) is the session id.

Conversion (:func:`to_source_messages`): a ``user`` message is a person's unless
``additional_kwargs["human"]`` is ``False``; an ``assistant`` message is finished unless it asks
for tools (``ToolCallBlock`` blocks or ``additional_kwargs["tool_calls"]``); a ``tool`` message
is the result for ``additional_kwargs["tool_call_id"]``; text is the text blocks only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.storage.chat_store.base import BaseChatStore
from llama_index.core.storage.chat_store.base_db import AsyncDBChatStore, MessageStatus

from memquill.lifecycle import SourceMessage, ToolCall, ToolOutput

__all__ = ["ChatStoreSource", "message_id", "to_source_messages"]


def message_id(position: int) -> str:
    """The id of the message at ``position`` in its session's history."""
    return f"m{position}"


def to_source_messages(messages: Sequence[ChatMessage], *, start: int = 0) -> list[SourceMessage]:
    """``messages`` (the session's history from position ``start`` on) as memquill messages."""
    converted: list[SourceMessage] = []
    for offset, message in enumerate(messages):
        identifier = message_id(start + offset)
        text = message.content or ""
        extra = message.additional_kwargs
        if message.role == MessageRole.USER:
            human = extra.get("human", True) is not False
            converted.append(SourceMessage(identifier, "user", text, human=human))
        elif message.role == MessageRole.ASSISTANT:
            calls = _tool_calls(message)
            converted.append(
                SourceMessage(identifier, "assistant", text, completed=not calls, tool_calls=calls)
            )
        elif message.role in (MessageRole.TOOL, MessageRole.FUNCTION):
            call_id = extra.get("tool_call_id")
            outputs = (ToolOutput(str(call_id), text),) if call_id else ()
            converted.append(SourceMessage(identifier, "tool", text, tool_outputs=outputs))
        elif message.role in (MessageRole.SYSTEM, MessageRole.DEVELOPER):
            converted.append(SourceMessage(identifier, "system", text))
    return converted


def _tool_calls(message: ChatMessage) -> tuple[ToolCall, ...]:
    calls = [
        ToolCall(block.tool_call_id or "", block.tool_name)
        for block in message.blocks
        if isinstance(block, ToolCallBlock)
    ]
    listed: object = message.additional_kwargs.get("tool_calls")
    if isinstance(listed, list):
        for item in cast("list[object]", listed):
            name = _field(_field(item, "function"), "name")
            if name:
                calls.append(ToolCall(str(_field(item, "id") or ""), str(name)))
    return tuple(calls)


def _field(item: object, name: str) -> object:
    """``item.name`` or ``item[name]`` (OpenAI tool calls come as objects or as dicts)."""
    if isinstance(item, dict):
        return cast("dict[str, object]", item).get(name)
    return getattr(item, name, None)


class ChatStoreSource:
    """The sessions of a LlamaIndex chat store (the store key is the session id).

    Args:
        store: the ``Memory``'s store (an ``AsyncDBChatStore`` such as
            ``SQLAlchemyChatStore``: pass the same one to ``Memory.from_defaults(chat_store=...)``)
            or a classic ``BaseChatStore``.
    """

    def __init__(self, store: AsyncDBChatStore | BaseChatStore) -> None:
        self.store = store

    async def history(self, session_id: str) -> list[ChatMessage]:
        """Every message of ``session_id``, archived and active, oldest first."""
        if isinstance(self.store, AsyncDBChatStore):
            return await self.store.get_messages(session_id, status=None)
        return await self.store.aget_messages(session_id)

    async def archived(self, session_id: str) -> int:
        """How many of the session's messages have left short-term memory."""
        if isinstance(self.store, AsyncDBChatStore):
            return await self.store.count_messages(session_id, status=MessageStatus.ARCHIVED)
        return len(await self.store.aget_messages(session_id))

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """The session's messages; ``None`` when the store has none for it."""
        history = await self.history(session_id)
        return to_source_messages(history) if history else None

    def __repr__(self) -> str:
        return f"ChatStoreSource({type(self.store).__name__})"
