"""What a host provides: its history (a transcript is one), its say, and a job's sources in it.

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

import asyncio
import errno
import hashlib
import io
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, Protocol, cast, runtime_checkable

from memquill.errors import InvalidInputError, Messages, SourceError
from memquill.jsondoc import parse_json
from memquill.lifecycle._ledger import Job, SourceRef
from memquill.paths import read_regular
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


# ----------------------------------------------------------------------------------------------
# A JSONL transcript as a :class:`~memquill.lifecycle.MessageSource` (what the CLI extracts).
#
# One JSON object per line, oldest first::
#
#     {"id": "u1", "role": "user", "content": "I moved to Lisbon in March."}
#     {"id": "a1", "role": "assistant", "content": "Welcome to Lisbon!"}
#     {"id": "a2", "role": "assistant", "content": [
#         {"type": "text", "text": "Saved."},
#         {"type": "tool_use", "id": "t1", "name": "memory_remember"},
#         {"type": "tool_result", "tool_use_id": "t1", "content": "{…receipt…}"}]}
#     {"id": "t2", "role": "tool", "tool_call_id": "t1", "content": "…", "is_error": false}
#
# - ``id``: the message id (default: ``L<line number>``); ``role``: ``user``, ``assistant``,
#   ``system`` or ``tool``; ``content``: text, or a list of blocks whose ``text`` blocks are the
#   text (``thinking`` and other blocks are left out).
# - Optional: ``status`` (an assistant message is finished only when it is ``completed``, the
#   default), ``human`` (``false`` for a user message a program wrote), ``created_at``,
#   ``tool_calls`` (``[{"id", "name"}]``), ``tool_call_id`` and ``is_error`` on ``tool`` lines,
#   and ``session`` (the session id, read from the first line).
#
# The file is read again at every request, so an edit made while a model is answering is seen.


MAX_TRANSCRIPT_BYTES: Final = 16 * 1024 * 1024
_ROLES: Final = frozenset({"user", "assistant", "system", "tool"})


class TranscriptSource:
    """The messages of one JSONL transcript file, as one session.

    Args:
        path: the transcript.
        session_id: the session id its turns are recorded under (default: the first line's
            ``session``, else ``transcript:`` and a digest of the file's real path, so the same
            file always gives the same session and a forgotten fact stays forgotten).
    """

    def __init__(self, path: str | os.PathLike[str], session_id: str | None = None) -> None:
        self.path = Path(path)
        self.session_id = session_id or _default_session(self.path)

    def read(self) -> list[SourceMessage]:
        """The transcript's messages, oldest first.

        Raises:
            InvalidInputError: a line is not a message (the error names the line, not its text).
            OSError: the file cannot be read.
        """
        return read_transcript(self.path)[1]

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """The transcript's messages when ``session_id`` is its session, else ``None``."""
        if session_id != self.session_id:
            return None
        try:
            return await asyncio.to_thread(self.read)
        except FileNotFoundError:
            return ()

    def __repr__(self) -> str:
        return f"TranscriptSource({str(self.path)!r}, session_id={self.session_id!r})"


def read_transcript(path: Path) -> tuple[str | None, list[SourceMessage]]:
    """The first line's ``session`` (if any) and the messages of a JSONL transcript."""
    try:
        # Symlinks are followed (a host may link its transcript), then read without ever
        # waiting: a FIFO or a device is refused at once.
        data = read_regular(os.path.realpath(path), MAX_TRANSCRIPT_BYTES)
    except SourceError as error:
        if error.message == Messages.TOO_LARGE:
            raise InvalidInputError("The transcript is larger than 16 MiB.") from None
        raise InvalidInputError("The transcript is not a regular file.") from None
    session: str | None = None
    messages: list[SourceMessage] = []
    with io.StringIO(data.decode("utf-8", "replace"), newline=None) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item: object = parse_json(line)
                message = _message(item, number)
            except (ValueError, TypeError, KeyError):
                raise InvalidInputError(f"Transcript line {number} is not a message.") from None
            if not messages and isinstance(raw_session := cast(Any, item).get("session"), str):
                session = raw_session
            messages.append(message)
    return session, messages


def _message(item: object, number: int) -> SourceMessage:
    if not isinstance(item, dict):
        raise ValueError("not an object")
    data = cast("dict[str, Any]", item)
    role = data["role"]
    if role not in _ROLES:
        raise ValueError("unknown role")
    identifier = data.get("id", f"L{number}")
    if not isinstance(identifier, str) or not identifier:
        raise ValueError("bad id")
    text, calls, outputs = _content(data.get("content", ""))
    calls += tuple(
        ToolCall(str(call["id"]), str(call["name"])) for call in data.get("tool_calls", [])
    )
    if role == "tool" and "tool_call_id" in data:
        outputs += (ToolOutput(str(data["tool_call_id"]), text, bool(data.get("is_error", False))),)
    created = data.get("created_at")
    return SourceMessage(
        id=identifier,
        role=cast(MessageRole, role),
        text=text,
        completed=data.get("status", "completed") == "completed",
        human=data.get("human", True) is not False,
        created_at=created if isinstance(created, str) else None,
        tool_calls=calls,
        tool_outputs=outputs,
    )


def _content(content: object) -> tuple[str, tuple[ToolCall, ...], tuple[ToolOutput, ...]]:
    if isinstance(content, str):
        return content, (), ()
    if not isinstance(content, list):
        raise TypeError("content is text or a list of blocks")
    texts: list[str] = []
    calls: list[ToolCall] = []
    outputs: list[ToolOutput] = []
    for block in cast("list[dict[str, Any]]", content):
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block["text"]))
        elif kind == "tool_use":
            calls.append(ToolCall(str(block["id"]), str(block["name"])))
        elif kind == "tool_result":
            result, _, _ = _content(block.get("content", ""))
            outputs.append(
                ToolOutput(str(block["tool_use_id"]), result, bool(block.get("is_error", False)))
            )
    return "\n".join(texts), tuple(calls), tuple(outputs)


def _default_session(path: Path) -> str:
    try:
        session, _ = read_transcript(path)
    except (OSError, InvalidInputError):
        session = None
    if session:
        return session
    digest = hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]
    return f"transcript:{digest}"


# ----------------------------------------------------------------------------------------------
# A job's sources, resolved against the host's history, and the storage signature.
#
# Both are facts a job is checked against before and after the model answers: which of its
# source turns still stand (a human user message with text, before a completed assistant
# reply), whether any changed while the model was answering, and whether the records storage
# changed since it last failed (metadata only, never content).


@dataclass(frozen=True, slots=True)
class UsableTurn:
    """A source turn that still stands: its reference and both messages."""

    ref: SourceRef
    user: SourceMessage
    assistant: SourceMessage


def usable_turns(job: Job, messages: Sequence[SourceMessage]) -> list[UsableTurn]:
    """The job's source turns that still stand in ``messages``, in the job's order."""
    index = {message.id: (position, message) for position, message in enumerate(messages)}
    usable: list[UsableTurn] = []
    for ref in job.refs:
        user = index.get(ref.user_message_id)
        reply = index.get(ref.assistant_message_id)
        if user is None or reply is None:
            continue
        (user_at, user_message), (reply_at, reply_message) = user, reply
        if (
            user_message.role == "user"
            and user_message.human
            and user_message.text.strip()
            and reply_message.role == "assistant"
            and reply_message.completed
            and user_at < reply_at
        ):
            usable.append(UsableTurn(ref, user_message, reply_message))
    return usable


def changed(used: Sequence[UsableTurn], job: Job, messages: Sequence[SourceMessage]) -> bool:
    """Whether any used source turn no longer stands exactly as it was read."""
    now = {turn.ref: turn for turn in usable_turns(job, messages)}
    for turn in used:
        again = now.get(turn.ref)
        if (
            again is None
            or again.user.text != turn.user.text
            or again.assistant.text != turn.assistant.text
        ):
            return True
    return False


def storage_signature(root: Path) -> str:
    """``[inode, size, mtime_ns, mode]`` of the workspace, ``memory/`` and ``records.md`` (or
    the error name for each), as compact JSON: it changes when someone repairs storage."""
    parts: list[object] = []
    for path in (root, root / "memory", root / "memory" / "records.md"):
        try:
            info = os.lstat(path)
        except OSError as error:
            parts.append(errno.errorcode.get(error.errno or 0, "error"))
        else:
            parts.append([info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode])
    return json.dumps(parts, separators=(",", ":"))
