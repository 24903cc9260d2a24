"""LangChain messages as memquill sees them, and a LangGraph checkpointer thread as their source.

memquill's automatic extraction keeps message ids only; when it extracts a batch it reads the
messages again from where the agent keeps them. For an agent built with ``create_agent(...,
checkpointer=saver)`` that is the checkpointer: :class:`CheckpointerSource` reads a thread's
latest checkpoint (the ``messages`` channel) with the saver's async API, or its sync API on a
worker thread for savers that have no async one. A thread id is the session id.

LangGraph saves a step's checkpoint in the background while the next step runs (and with
``durability="exit"`` only when the run ends), so the checkpoint holding a turn's reply may
still be on its way when the turn is recorded. The middleware therefore hands over the messages
its ``after_agent`` hook saw, with the id of the checkpoint they were taken from
(:meth:`CheckpointerSource.hold`); they stand in for the thread until the checkpointer holds a
checkpoint at least as new (ids ordered as LangGraph orders them: a later checkpoint has the
greater id). From then on the checkpointer is the truth again, so an edit or a deletion made
after the run (a newer checkpoint) is seen. Nothing waits and nothing polls.

Conversion (:func:`to_source_messages`): a ``HumanMessage`` is a user message (written by a
person unless ``additional_kwargs["human"]`` is ``False``); an ``AIMessage`` is an assistant
message, finished unless it still asks for tools or was cut off (``finish_reason`` ``length``
or ``content_filter``); a ``ToolMessage`` is a tool result (an error when its ``status`` is
``error``); text is the messages' text blocks only.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from memquill.lifecycle import SourceMessage, ToolCall, ToolOutput

__all__ = ["CheckpointerSource", "to_source_messages"]

_CUT_OFF: Final = frozenset({"length", "content_filter", "max_tokens"})
_HELD_THREADS: Final = 256


def to_source_messages(messages: Sequence[BaseMessage]) -> list[SourceMessage]:
    """``messages`` as memquill's :class:`~memquill.lifecycle.SourceMessage` objects, in order.

    A message without an id (outside a graph, LangGraph gives every message one) is named by
    its position, ``#<index>``.
    """
    converted: list[SourceMessage] = []
    for index, message in enumerate(messages):
        identifier = message.id or f"#{index}"
        if isinstance(message, HumanMessage):
            human = message.additional_kwargs.get("human", True) is not False
            converted.append(SourceMessage(identifier, "user", message.text, human=human))
        elif isinstance(message, AIMessage):
            finish = message.response_metadata.get("finish_reason")
            calls = tuple(
                ToolCall(call["id"], call["name"]) for call in message.tool_calls if call["id"]
            )
            completed = not message.tool_calls and finish not in _CUT_OFF
            converted.append(
                SourceMessage(
                    identifier, "assistant", message.text, completed=completed, tool_calls=calls
                )
            )
        elif isinstance(message, ToolMessage):
            output = ToolOutput(message.tool_call_id, message.text, message.status == "error")
            converted.append(
                SourceMessage(identifier, "tool", message.text, tool_outputs=(output,))
            )
        elif isinstance(message, SystemMessage):
            converted.append(SourceMessage(identifier, "system", message.text))
    return converted


class CheckpointerSource:
    """The messages of LangGraph threads, read from a checkpointer (the thread id is the
    session id).

    Args:
        checkpointer: the saver the agent was compiled with (``InMemorySaver``, a SQLite or
            Postgres saver, …).
        messages_key: the state key that holds the conversation (``messages`` for agents from
            ``create_agent``).
    """

    def __init__(self, checkpointer: BaseCheckpointSaver[Any], *, messages_key: str = "messages"):
        self.checkpointer = checkpointer
        self.messages_key = messages_key
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._lock = threading.Lock()

    def hold(self, session_id: str, checkpoint_id: str, messages: Sequence[SourceMessage]) -> None:
        """Serve ``messages`` for ``session_id`` until the checkpointer has caught up.

        ``checkpoint_id`` names the checkpoint ``messages`` were taken from (a node's
        ``runtime.execution_info.checkpoint_id``). Until the thread's latest saved checkpoint
        is at least that one, :meth:`messages` answers ``messages``. The newest hold of a
        thread replaces the one before; the most recent 256 threads are kept.
        """
        with self._lock:
            self._held[session_id] = _Held(checkpoint_id, tuple(messages))
            self._held.move_to_end(session_id)
            while len(self._held) > _HELD_THREADS:
                self._held.popitem(last=False)

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """The thread's messages at its latest checkpoint (or the held ones while that
        checkpoint is older than theirs); ``None`` for an unknown thread."""
        found = await self._latest(session_id)
        with self._lock:
            held = self._held.get(session_id)
            if held is not None:
                if found is None or found.checkpoint["id"] < held.checkpoint_id:
                    return held.messages
                del self._held[session_id]  # caught up: the checkpointer decides from now on
        if found is None:
            return None
        value: object = found.checkpoint["channel_values"].get(self.messages_key)
        if not isinstance(value, list):
            return None  # not a plain message list (a delta channel): nothing can be checked
        messages = [item for item in value if isinstance(item, BaseMessage)]  # pyright: ignore[reportUnknownVariableType]
        return to_source_messages(messages)

    async def _latest(self, session_id: str) -> CheckpointTuple | None:
        config: Any = {"configurable": {"thread_id": session_id, "checkpoint_ns": ""}}
        try:
            return await self.checkpointer.aget_tuple(config)
        except NotImplementedError:  # a saver with a sync API only
            return await asyncio.to_thread(self.checkpointer.get_tuple, config)

    def __repr__(self) -> str:
        return f"CheckpointerSource({type(self.checkpointer).__name__})"


class _Held(NamedTuple):
    checkpoint_id: str
    messages: tuple[SourceMessage, ...]
