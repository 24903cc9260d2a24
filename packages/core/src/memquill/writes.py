"""The write tools' operations and their receipts (``memory_remember/update/forget``).

Every write is checked at call time, never only when tools were built: the session must still
have write access and the host's ``authorize_write`` must still agree, and a trusted session id
must be present. Success is a ``memory_write_receipt``; any failure is a ``memory_write_error``
with the store's code and message (``invalid`` for authorisation, session and argument
problems). Nothing is written on failure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel

from memquill.errors import InvalidInputError, MemoryRecordError, MemquillError, Messages
from memquill.records import sha256_hex
from memquill.results import Candidate, WriteResult
from memquill.scope import MemorySession
from memquill.tool_models import (
    ForgetArgs,
    RememberArgs,
    ToolResult,
    UpdateArgs,
    WriteError,
    WriteReceipt,
)

__all__ = ["WriteOperation", "forget", "remember", "update", "write_failure"]

WriteOperation = Literal["remember", "update", "forget"]


def _json(model: BaseModel) -> tuple[str, dict[str, Any]]:
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False), data


def write_failure(operation: WriteOperation, error: MemquillError) -> ToolResult:
    """The ``memory_write_error`` result for ``error``."""
    code = error.code if isinstance(error, MemoryRecordError) else "invalid"
    text, data = _json(WriteError(operation=operation, code=code, message=error.message))
    return ToolResult(text, data, is_error=True)


def _run(
    session: MemorySession,
    operation: WriteOperation,
    write: Callable[[str], tuple[WriteResult, str | None]],
) -> ToolResult:
    if not session.write_allowed():
        return write_failure(operation, InvalidInputError(Messages.WRITE_UNAUTHORIZED))
    session_id = session.session_id
    if not session_id:
        return write_failure(operation, InvalidInputError(Messages.NO_SESSION))
    try:
        result, record_id = write(session_id)
    except MemquillError as error:
        return write_failure(operation, error)
    status = result.status
    if status == "duplicate" and record_id is None:
        status = "blocked"  # a key whose only record is no longer active can never re-save
    revision = _record_revision(result, record_id)
    receipt = WriteReceipt(
        operation=operation,
        status=status,
        record_id=record_id,
        revision=result.revision,
        record_revision=revision,
        source_session_id=session_id,
    )
    text, data = _json(receipt)
    return ToolResult(text, data, is_error=False)


def _record_revision(result: WriteResult, record_id: str | None) -> str | None:
    if record_id is not None and record_id == result.record_id:
        return result.record_revision
    return None


def remember(session: MemorySession, args: RememberArgs) -> ToolResult:
    """Save ``args.content`` with tool provenance from the session (idempotent per session)."""

    def write(session_id: str) -> tuple[WriteResult, str | None]:
        key = args.idempotency_key or hashlib.md5(args.content.encode()).hexdigest()  # noqa: S324 - a content fingerprint, as the receipt contract defines it
        candidate = Candidate(
            content=args.content,
            source={"kind": "tool", "sessionId": session_id},
            idempotency_key=f"tool:{session_id}:{key}",
        )
        result = session.store.save([candidate])
        operation_hash = sha256_hex(candidate.idempotency_key)
        active = next(
            (
                record.id
                for record in result.records
                if record.operation_hash == operation_hash and record.status == "active"
            ),
            None,
        )
        return result, active

    return _run(session, "remember", write)


def update(session: MemorySession, args: UpdateArgs) -> ToolResult:
    """Correct an active record; the receipt names the new version."""

    def write(session_id: str) -> tuple[WriteResult, str | None]:
        source = {"kind": "tool", "sessionId": session_id}
        result = session.store.correct(args.id, args.content, args.expected_revision, source)
        return result, result.record_id

    return _run(session, "update", write)


def forget(session: MemorySession, args: ForgetArgs) -> ToolResult:
    """Revoke a record and every version of its fact; the receipt names the given id."""

    def write(session_id: str) -> tuple[WriteResult, str | None]:
        del session_id  # forgetting keeps the original provenance as the tombstone
        result = session.store.revoke(args.id, args.expected_revision)
        return result, args.id

    return _run(session, "forget", write)
