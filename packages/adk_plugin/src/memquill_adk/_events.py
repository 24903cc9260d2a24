"""ADK session events as memquill's ``SourceMessage``s, for extraction.

An event authored by ``user`` is the person's message; an event carrying function responses is
a ``tool`` message (each response a ``ToolOutput``: its ``result`` text, or its ``error`` text
with ``is_error``); any other event with content is the agent's (``assistant``), with its
function calls. Partial (streamed) events are left out: the final event repeats their text.
Thought parts are never read. An assistant event with an ``error_code`` or ``interrupted`` did
not finish.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from memquill.lifecycle import MessageRole, SourceMessage, ToolCall, ToolOutput

if TYPE_CHECKING:
    from google.adk.events.event import Event


def source_messages(events: Sequence[Event]) -> list[SourceMessage]:
    """The messages ``events`` hold, in order (events without content are left out)."""
    messages: list[SourceMessage] = []
    for position, event in enumerate(events):
        content = event.content
        if event.partial or content is None or not content.parts:
            continue
        parts = content.parts
        texts = [part.text for part in parts if part.text and not part.thought]
        calls = tuple(
            ToolCall(part.function_call.id or "", part.function_call.name or "")
            for part in parts
            if part.function_call is not None
        )
        outputs = tuple(
            _output(part.function_response.id or "", part.function_response.response)
            for part in parts
            if part.function_response is not None
        )
        role: MessageRole = "tool" if outputs else "user" if event.author == "user" else "assistant"
        messages.append(
            SourceMessage(
                id=event.id or f"{event.invocation_id}:{position}",
                role=role,
                text="\n".join(texts),
                completed=event.error_code is None and not event.interrupted,
                created_at=datetime.fromtimestamp(event.timestamp, UTC).isoformat(),
                tool_calls=calls,
                tool_outputs=outputs,
            )
        )
    return messages


def _output(call_id: str, response: Mapping[str, Any] | None) -> ToolOutput:
    body = cast("Mapping[str, Any]", response or {})
    for field, is_error in (("error", True), ("result", False)):
        value = body.get(field)
        if isinstance(value, str) and len(body) == 1:
            return ToolOutput(call_id, value, is_error)
    return ToolOutput(call_id, json.dumps(body, ensure_ascii=False, default=str), "error" in body)
