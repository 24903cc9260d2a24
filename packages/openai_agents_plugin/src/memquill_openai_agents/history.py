"""An OpenAI Agents SDK ``Session`` as memquill's ``MessageSource``.

memquill's automatic extraction keeps message ids only, and reads the messages again from the
host's history when it extracts a batch. :class:`SessionSource` reads a ``Session``'s items
(``get_items``) and never writes them: no ``add_items``, ``pop_item`` or ``clear_session``.

Items have no stable id of their own (a user message has none), so an item is named by its
position in the session, ``i<index>``: a session only grows at its end, an edited item keeps
its id and is seen as changed, and a popped or cleared one makes its id unknown, so nothing is
saved from it.

Conversion (:func:`to_source_messages`): a ``user`` message is a person's; an ``assistant``
message is finished unless its ``status`` says otherwise; a ``function_call`` item is an
unfinished assistant step asking for that tool; a ``function_call_output`` item is the tool's
result; ``system`` and ``developer`` messages are system text; text is the text parts only
(``input_text``, ``output_text``, or a plain string). Other items (reasoning, hosted tools) are
left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from agents.memory.session import Session

from memquill.lifecycle import SourceMessage, ToolCall, ToolOutput

__all__ = ["SessionSource", "item_id", "to_source_messages"]

SessionOpener = Callable[[str], Session | None]


def item_id(position: int) -> str:
    """The id of the item at ``position`` in its session."""
    return f"i{position}"


def to_source_messages(items: Sequence[Any]) -> list[SourceMessage]:
    """A session's items (``TResponseInputItem`` dicts, oldest first) as memquill messages."""
    converted: list[SourceMessage] = []
    for position, raw in enumerate(items):
        item = _mapping(raw)
        if item is None:
            continue
        identifier = item_id(position)
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "function_call":
            call = ToolCall(str(item.get("call_id") or ""), str(item.get("name") or ""))
            converted.append(
                SourceMessage(identifier, "assistant", "", completed=False, tool_calls=(call,))
            )
        elif kind == "function_call_output":
            text = _text(item.get("output"))
            output = ToolOutput(str(item.get("call_id") or ""), text)
            converted.append(SourceMessage(identifier, "tool", text, tool_outputs=(output,)))
        elif kind == "message" and role == "user":
            converted.append(SourceMessage(identifier, "user", _text(item.get("content"))))
        elif kind == "message" and role == "assistant":
            finished = item.get("status", "completed") == "completed"
            converted.append(
                SourceMessage(
                    identifier, "assistant", _text(item.get("content")), completed=finished
                )
            )
        elif kind == "message" and role in ("system", "developer"):
            converted.append(SourceMessage(identifier, "system", _text(item.get("content"))))
    return converted


def _mapping(item: object) -> Mapping[str, Any] | None:
    if isinstance(item, Mapping):
        return cast("Mapping[str, Any]", item)
    dump = getattr(item, "model_dump", None)  # an SDK model instead of its dict
    return cast("Mapping[str, Any]", dump()) if callable(dump) else None


def _text(content: object) -> str:
    """The text parts of a message's content (or a tool output), joined with newlines."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts: list[str] = []
    for raw in cast("list[object]", content):
        part = _mapping(raw)
        if part is not None and part.get("type") in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
    return "\n".join(texts)


class SessionSource:
    """The conversations of OpenAI Agents SDK sessions, by session id (read only).

    Args:
        sessions: the sessions to serve, each under its ``session_id``.
        open: opens the session for an id the list does not hold (for example
            ``lambda session_id: SQLiteSession(session_id, "conversations.db")``), or returns
            ``None`` for a session this host does not know.
    """

    def __init__(self, *sessions: Session, open: SessionOpener | None = None) -> None:
        self._sessions: dict[str, Session] = {session.session_id: session for session in sessions}
        self._open = open

    def session(self, session_id: str) -> Session | None:
        """The session named ``session_id``, if this source serves it."""
        found = self._sessions.get(session_id)
        if found is None and self._open is not None:
            found = self._open(session_id)
        return found

    async def messages(self, session_id: str) -> Sequence[SourceMessage] | None:
        """The session's messages; ``None`` when the session is unknown or empty."""
        session = self.session(session_id)
        if session is None:
            return None
        items = await session.get_items()
        return to_source_messages(items) if items else None

    def __repr__(self) -> str:
        return f"SessionSource({sorted(self._sessions)})"
