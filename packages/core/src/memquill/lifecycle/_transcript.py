"""A JSONL transcript as a :class:`~memquill.lifecycle.MessageSource` (what the CLI extracts).

One JSON object per line, oldest first::

    {"id": "u1", "role": "user", "content": "I moved to Lisbon in March."}
    {"id": "a1", "role": "assistant", "content": "Welcome to Lisbon!"}
    {"id": "a2", "role": "assistant", "content": [
        {"type": "text", "text": "Saved."},
        {"type": "tool_use", "id": "t1", "name": "memory_remember"},
        {"type": "tool_result", "tool_use_id": "t1", "content": "{…receipt…}"}]}
    {"id": "t2", "role": "tool", "tool_call_id": "t1", "content": "…", "is_error": false}

- ``id``: the message id (default: ``L<line number>``); ``role``: ``user``, ``assistant``,
  ``system`` or ``tool``; ``content``: text, or a list of blocks whose ``text`` blocks are the
  text (``thinking`` and other blocks are left out).
- Optional: ``status`` (an assistant message is finished only when it is ``completed``, the
  default), ``human`` (``false`` for a user message a program wrote), ``created_at``,
  ``tool_calls`` (``[{"id", "name"}]``), ``tool_call_id`` and ``is_error`` on ``tool`` lines,
  and ``session`` (the session id, read from the first line).

The file is read again at every request, so an edit made while a model is answering is seen.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, cast

from memquill.errors import InvalidInputError, Messages, SourceError
from memquill.jsondoc import parse_json
from memquill.lifecycle._host import MessageRole, SourceMessage, ToolCall, ToolOutput
from memquill.paths import read_regular

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
