"""Committed turns: which finished turns count, and how every third one closes a batch.

A turn is one user message and the assistant's reply to it, recorded once the reply is safely
stored by the host. It counts only when it succeeded, was not a system turn (a heartbeat, a
scheduled task), its user message was written by a person and has text, and the assistant's
reply completed (the session's binding and Plan mode are the host's gate, checked by
:class:`~memquill.lifecycle.Extraction`). A turn in which a memory write tool saved something
(a paired, successful ``memory_remember``/``update``/``forget`` result whose receipt says
``saved``) still counts for the cadence but is not a source: the model already chose what to
remember there.

Recording is one short ledger change: the turn id (``sha256(session id + ":" + assistant
message id)``) is added once (a repeat is a no-op), the session's counter goes up, the turn's
message ids join the session's pending sources, and every third turn of a session turns those
sources into a job. Pending sources are in the ledger, so a restart loses none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, cast

from memquill.errors import JobLimitError, Messages
from memquill.jsondoc import parse_json
from memquill.lifecycle._host import SourceMessage, ToolCall, ToolOutput
from memquill.lifecycle._ledger import (
    BATCH_TURNS,
    MAX_JOBS,
    MAX_TURNS,
    Job,
    LedgerFile,
    SourceRef,
    turn_id,
)

Refusal = Literal[
    "unsuccessful",
    "system_turn",
    "no_user_message",
    "not_human",
    "empty_user_text",
    "assistant_incomplete",
    "invalid_id",
]
"""Why a turn does not count (the host's gate adds ``unbound`` and ``read_only``)."""

_WRITE_TOOL: Final = re.compile(r"^(?:.*__)?memory_(?:remember|update|forget)$")
_MAX_ID: Final = 200


@dataclass(frozen=True, slots=True)
class CommittedTurn:
    """A finished turn, as a host reports it after storing the assistant's reply.

    Attributes:
        session_id: the host's conversation (a thread id, a chat store key).
        user_message_id: the user message the turn answered (``None``: not known; the turn
            does not count).
        assistant_message_id: the assistant message that closed the turn.
        user_text: the user message's text, only to check that it has some (never stored).
        human_user: whether a person wrote the user message.
        assistant_completed: whether the reply finished (not failed, interrupted, partial).
        successful: whether the whole turn ended without an error.
        system_turn: an automatic turn (heartbeat, scheduled task, onboarding hook).
        tool_calls, tool_outputs: the turn's tool calls and results, for the receipt check.
    """

    session_id: str
    user_message_id: str | None
    assistant_message_id: str
    user_text: str = ""
    human_user: bool = True
    assistant_completed: bool = True
    successful: bool = True
    system_turn: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    tool_outputs: tuple[ToolOutput, ...] = ()

    @property
    def id(self) -> str:
        """The turn id."""
        return turn_id(self.session_id, self.assistant_message_id)

    def refusal(self) -> Refusal | None:
        """Why this turn does not count, or ``None`` when it does."""
        ids = (self.session_id, self.assistant_message_id, self.user_message_id or "x")
        if any(not value or len(value) > _MAX_ID or not value.isprintable() for value in ids):
            return "invalid_id"
        checks: tuple[tuple[bool, Refusal], ...] = (
            (self.successful, "unsuccessful"),
            (not self.system_turn, "system_turn"),
            (self.user_message_id is not None, "no_user_message"),
            (self.human_user, "not_human"),
            (bool(self.user_text.strip()), "empty_user_text"),
            (self.assistant_completed, "assistant_incomplete"),
        )
        return next((refusal for ok, refusal in checks if not ok), None)

    @property
    def wrote_memory(self) -> bool:
        """Whether a memory write tool saved something in this turn."""
        return has_memory_write(self.tool_calls, self.tool_outputs)


def has_memory_write(calls: Iterable[ToolCall], outputs: Iterable[ToolOutput]) -> bool:
    """Whether a memory write tool's call succeeded with a ``saved`` receipt.

    Only a result paired with a call (same id) of ``memory_remember``, ``memory_update`` or
    ``memory_forget`` (bare, or after a ``__`` separator as MCP hosts prefix it), not marked
    as an error, whose text is a ``memory_write_receipt`` with status ``saved`` and a
    revision. Reads, duplicates, blocked writes, errors, unpaired results and claims in plain
    text never count.
    """
    names = {call.id: call.name for call in calls if call.id}
    for output in outputs:
        name = names.get(output.call_id)
        if name is None or output.is_error or not _WRITE_TOOL.match(name):
            continue
        try:
            receipt: object = parse_json(output.content)
        except ValueError:
            continue
        if not isinstance(receipt, dict):
            continue
        fields = cast("dict[str, object]", receipt)
        revision = fields.get("revision")
        if (
            fields.get("type") == "memory_write_receipt"
            and fields.get("status") == "saved"
            and isinstance(revision, str)
            and revision
        ):
            return True
    return False


def committed_turns(session_id: str, messages: Sequence[SourceMessage]) -> list[CommittedTurn]:
    """The turns in a session's ``messages``, oldest first.

    A turn is a user message and everything up to the next user message; the last assistant
    message in it closes it (a turn without one is not finished, and is left out). Tool calls
    and results anywhere in the turn count for the receipt check.
    """
    turns: list[CommittedTurn] = []
    user: SourceMessage | None = None
    group: list[SourceMessage] = []

    def close() -> None:
        replies = [message for message in group if message.role == "assistant"]
        if user is None or not replies:
            return
        reply = replies[-1]
        turns.append(
            CommittedTurn(
                session_id=session_id,
                user_message_id=user.id,
                assistant_message_id=reply.id,
                user_text=user.text,
                human_user=user.human,
                assistant_completed=reply.completed,
                tool_calls=tuple(call for message in group for call in message.tool_calls),
                tool_outputs=tuple(out for message in group for out in message.tool_outputs),
            )
        )

    for message in messages:
        if message.role == "user":
            close()
            user, group = message, []
        else:
            group.append(message)
    close()
    return turns


def record_turn(ledger: LedgerFile, turn: CommittedTurn, *, provider_id: str, now: str) -> bool:
    """Count ``turn`` in the ledger; ``True`` when it closed a batch and a job was added.

    The turn must already have passed :meth:`CommittedTurn.refusal` and the host's gate.

    Raises:
        JobLimitError: the ledger already holds 5,000 turns (extraction has stopped here).
        JobBusyError, JobCorruptError, JobUnsafePathError, StorageError.
    """
    assert turn.user_message_id is not None
    identifier = turn.id
    with ledger.change() as document:
        if identifier in document.turns:
            return False
        if len(document.turns) >= MAX_TURNS:
            raise JobLimitError(Messages.JOBS_LIMIT)
        document.turns.append(identifier)
        session = turn.session_id
        count = document.counters.get(session, 0) + 1
        document.counters[session] = count
        if not turn.wrote_memory:
            ref = SourceRef(turn.user_message_id, turn.assistant_message_id)
            document.pending_sources.setdefault(session, []).append(ref)
        if count % BATCH_TURNS:
            return False
        refs = document.pending_sources.pop(session, [])
        closing = SourceRef(turn.user_message_id, turn.assistant_message_id)
        return _add_job(document.jobs, identifier, session, closing, refs, provider_id, now)


def flush_session(ledger: LedgerFile, session_id: str, *, provider_id: str, now: str) -> bool:
    """Close ``session_id``'s pending sources into a job now (a conversation that ended).

    ``True`` when a job was added. A session without pending sources, or a workspace without
    a ledger, is left as it is (nothing is created).
    """
    if not ledger.exists():
        return False
    with ledger.change() as document:
        refs = document.pending_sources.pop(session_id, [])
        if not refs:
            return False
        closing = refs[-1]
        identifier = turn_id(session_id, closing.assistant_message_id)
        return _add_job(document.jobs, identifier, session_id, closing, refs, provider_id, now)


def _add_job(
    jobs: list[Job],
    identifier: str,
    session: str,
    closing: SourceRef,
    refs: list[SourceRef],
    provider: str,
    now: str,
) -> bool:
    if not refs or any(job.id == identifier for job in jobs):
        return False
    if len(jobs) >= MAX_JOBS:
        raise JobLimitError(Messages.JOBS_LIMIT)
    jobs.append(
        Job(
            id=identifier,
            session_id=session,
            user_message_id=closing.user_message_id,
            assistant_message_id=closing.assistant_message_id,
            provider_id=provider,
            status="pending",
            updated_at=now,
            sources=tuple(refs),
        )
    )
    return True
