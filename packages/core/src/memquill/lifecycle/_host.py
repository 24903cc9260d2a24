"""What a host provides: its history (a :class:`MessageSource`) and its say over a session.

memquill does not own chat history, a :class:`MessageSource` does.
The ledger keeps message ids only. When a batch is extracted, the runner asks the host's source
for the session's messages, takes the text of the batch's user messages from there, and asks
again after the model answered: a message edited or deleted meanwhile stops the save. Adapters
provide sources for a LangGraph checkpointer thread (``memquill-langchain``) and a LlamaIndex
chat store (``memquill-llamaindex``); the core has a JSONL transcript
(:class:`~memquill.lifecycle.TranscriptSource`) and :class:`RecordedMessages`, an in-process
source for hosts that keep no history at all.

A :data:`SessionGate` answers for one session id: ``ready``; ``read_only`` (Plan mode or any
mode where nothing may be written: the turn is not counted, and a job waits with
``unavailable: policy_blocked``); or ``unbound`` (the session is not, or no longer, bound to
this workspace: the turn is not counted, and a job is ``skipped: binding_unavailable``). It is
asked when a turn is recorded, before a job runs and again after the model answered, so
switching to Plan mode during generation saves nothing.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol, runtime_checkable

from memquill.tools import BindingBackend

MessageRole = Literal["user", "assistant", "system", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call an assistant message asked for."""

    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A tool's result, as the conversation recorded it.

    Attributes:
        call_id: the :class:`ToolCall` it answers.
        content: the result's text (a write tool's receipt is JSON text).
        is_error: whether the framework marked the call as failed.
    """

    call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class SourceMessage:
    """One message of a session, as a source resolves it.

    Attributes:
        id: the message's id in the host's history (stable for as long as the message exists).
        role: ``user``, ``assistant``, ``system`` or ``tool``.
        text: the message's text blocks joined with newlines (thinking, tool calls and other
            blocks left out).
        completed: for an assistant message, whether it finished successfully (``False``: it
            failed, was interrupted or is still being written).
        human: for a user message, whether a person wrote it (``False``: a scheduled task's
            prompt, a heartbeat, another program).
        created_at: when it was written (ISO-8601), if the host knows; kept as provenance.
        tool_calls: the tool calls an assistant message made.
        tool_outputs: the tool results a message carries (a ``tool`` message, or blocks).
    """

    id: str
    role: MessageRole
    text: str
    completed: bool = True
    human: bool = True
    created_at: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_outputs: tuple[ToolOutput, ...] = ()


@runtime_checkable
class MessageSource(Protocol):
    """A session's messages, in conversation order, read from wherever the host keeps them."""

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """Every message of ``session_id``, oldest first; ``None`` when the session is unknown.

        A source serves the sessions it knows: the runner leaves a job alone (no status change)
        while its session is unknown to the source, so two hosts that share a workspace never
        settle each other's jobs. Raise nothing for a missing session; a source that cannot be
        read may raise (the pass stops and the job is retried later).
        """
        ...


_DEFAULT_SESSIONS: Final = 256
_DEFAULT_MESSAGES: Final = 200


class RecordedMessages:
    """An in-process :class:`MessageSource`: the messages a host handed over, kept in memory.

    For hosts that keep no history of their own (an agent without a checkpointer): the host
    records each turn's messages, and they stay until the process ends. Bounded: the newest
    ``max_messages`` of each of the ``max_sessions`` most recently recorded sessions. A message
    recorded again with the same id replaces the old one in place (an edit).
    """

    def __init__(
        self, *, max_sessions: int = _DEFAULT_SESSIONS, max_messages: int = _DEFAULT_MESSAGES
    ) -> None:
        self._max_sessions = max(1, max_sessions)
        self._max_messages = max(1, max_messages)
        self._sessions: OrderedDict[str, list[SourceMessage]] = OrderedDict()
        self._lock = threading.Lock()

    def record(self, session_id: str, messages: Sequence[SourceMessage]) -> None:
        """Add ``messages`` to ``session_id`` (same id: replaced in place)."""
        with self._lock:
            stored = self._sessions.setdefault(session_id, [])
            self._sessions.move_to_end(session_id)
            index = {message.id: position for position, message in enumerate(stored)}
            for message in messages:
                position = index.get(message.id)
                if position is None:
                    index[message.id] = len(stored)
                    stored.append(message)
                else:
                    stored[position] = message
            del stored[: max(0, len(stored) - self._max_messages)]
            while len(self._sessions) > self._max_sessions:
                self._sessions.popitem(last=False)

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """The recorded messages of ``session_id`` (``None`` if none were recorded)."""
        with self._lock:
            stored = self._sessions.get(session_id)
            return None if stored is None else tuple(stored)


SessionState = Literal["ready", "read_only", "unbound"]
SessionGate = Callable[[str], SessionState]
"""Takes a session id; answers ``ready``, ``read_only`` or ``unbound``. Keep it cheap."""


def always_ready(session_id: str) -> SessionState:
    """The gate of a host that scopes memory itself (every session it records is ready)."""
    return "ready"


def binding_gate(
    bindings: BindingBackend,
    workspace: str | os.PathLike[str],
    read_only: Callable[[str], bool] | None = None,
) -> SessionGate:
    """A gate from explicit bindings: ``unbound`` unless ``bindings`` binds the session to
    ``workspace``; ``read_only`` when ``read_only(session_id)`` says so (Plan mode)."""

    def gate(session_id: str) -> SessionState:
        if bindings.resolve(session_id, workspace) is None:
            return "unbound"
        if read_only is not None and read_only(session_id):
            return "read_only"
        return "ready"

    return gate
