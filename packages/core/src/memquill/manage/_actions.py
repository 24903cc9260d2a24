"""The changes a person can ask for: ``remember``, ``correct``, ``forget``, ``retry``, ``repair``,
``keep``.

A request body is a JSON object with exactly the keys its action takes; anything else is
refused before the store is touched, so a client can never choose the workspace, the source or
the key space. Every action carries the 64-hex revision the person saw (``expectedRevision``),
and the store compares it under its lock. Page writes are manual: source ``manual``. A
``repair`` names the revision of the repair plan the page showed for an unreadable
``records.md``: only that file is repaired, after a backup, as ``memquill doctor --fix`` does.
A ``keep`` settles a diverged fact on one of its versions, as ``memquill sync keep`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from memquill.errors import ConflictError, CorruptError, InvalidInputError, JobLedgerError
from memquill.jsondoc import parse_json
from memquill.manage._state import Backend
from memquill.store import ID_PATTERN, REVISION_PATTERN
from memquill.sync import keep_version
from memquill.tools import WriteOutcome, WriteSource, correct, forget, remember

WORKSPACE_CHANGED: Final = "Workspace or memory changed."
KEY_PREFIX: Final = "manual:page:"
"""Page keys live apart from the CLI's (``manual:<sha256>`` or ``--key``) and the tools'."""

Revision = Annotated[str, StringConstraints(pattern=REVISION_PATTERN)]
RecordId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    expected_revision: Revision = Field(alias="expectedRevision")


class RememberAction(_Body):
    """Save a new fact (the key makes a resubmitted form a no-op)."""

    action: Literal["remember"]
    content: str
    idempotency_key: Annotated[str, StringConstraints(min_length=1, max_length=200)] = Field(
        alias="idempotencyKey"
    )


class CorrectAction(_Body):
    """Replace an active fact; ``expectedRevision`` may be the record's own revision."""

    action: Literal["correct"]
    id: RecordId
    content: str


class ForgetAction(_Body):
    """Forget a fact and every version of it."""

    action: Literal["forget"]
    id: RecordId


class KeepAction(_Body):
    """Settle a diverged fact on this version (``expectedRevision``: its record revision)."""

    action: Literal["keep"]
    id: RecordId


class RetryAction(_Body):
    """Ask the extraction lifecycle to run its retryable jobs now."""

    action: Literal["retry"]


class RepairAction(_Body):
    """Repair a hand-edited ``records.md`` as shown (``expectedRevision`` is the plan's)."""

    action: Literal["repair"]


Action = Annotated[
    RememberAction | CorrectAction | ForgetAction | KeepAction | RetryAction | RepairAction,
    Field(discriminator="action"),
]
_ACTION: Final[TypeAdapter[Action]] = TypeAdapter(Action)


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key")
    return dict(pairs)


def _message(error: ValidationError) -> str:
    for detail in error.errors():
        where = detail["loc"][1:2]  # the first part names the action (the union's tag)
        if detail["type"] in ("union_tag_invalid", "union_tag_not_found"):
            return "Unknown action."
        if where == ("id",) and detail["type"] == "missing":
            return "Memory ID is required."
        if where == ("expectedRevision",):
            return "expectedRevision must be the 64-character revision the page showed."
    return "Invalid request."


def parse_action(body: bytes) -> Action:
    """The action in ``body``.

    Raises:
        InvalidInputError: not UTF-8 JSON, not one object, an unknown action, a missing or
            extra key, or a value of the wrong type or form.
    """
    try:
        data: object = parse_json(body.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InvalidInputError("Invalid request.") from error
    try:
        return _ACTION.validate_python(data)
    except ValidationError as error:
        raise InvalidInputError(_message(error)) from error


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did: its HTTP status and JSON answer."""

    status: int
    body: dict[str, object]


def _written(outcome: WriteOutcome) -> Outcome:
    return Outcome(
        200,
        {
            "status": outcome.status,
            "recordId": outcome.record_id,
            "recordRevision": outcome.record_revision,
            "revision": outcome.revision,
        },
    )


def _repaired(backend: Backend, expected_revision: str) -> Outcome:
    report = backend.session.store.doctor(fix=True, expected_revision=expected_revision)
    plan = report.repair
    if plan is None:  # the file reads: someone repaired or replaced it since the page showed it
        raise ConflictError(WORKSPACE_CHANGED)
    if not report.repaired:
        index = report.diagnosis.record_index if report.diagnosis is not None else None
        raise CorruptError(f"This file cannot be repaired without guessing: {plan.refused}.", index)
    return Outcome(
        200,
        {
            "repaired": True,
            "changes": list(plan.changes),
            "backup": report.backup,
            "revision": report.revision,
        },
    )


def perform(backend: Backend, action: Action, now: datetime) -> Outcome:
    """Carry out ``action`` on the backend's workspace through the one write path.

    Raises:
        MemquillError: the write path or the store refused (``conflict`` for a stale
            revision, and so on).
    """
    session = backend.session
    source = WriteSource.manual(now)
    if isinstance(action, RememberAction):
        key = KEY_PREFIX + action.idempotency_key
        outcome = remember(
            session,
            action.content,
            source=source,
            idempotency_key=key,
            expected_revision=action.expected_revision,
        )
        return _written(outcome)
    if isinstance(action, CorrectAction):
        outcome = correct(
            session, action.id, action.content, action.expected_revision, source=source
        )
        return _written(outcome)
    if isinstance(action, ForgetAction):
        return _written(forget(session, action.id, action.expected_revision, source=source))
    if isinstance(action, KeepAction):
        return _written(keep_version(session, action.id, action.expected_revision, source=source))
    if isinstance(action, RepairAction):
        return _repaired(backend, action.expected_revision)
    if session.store.snapshot().revision != action.expected_revision:
        raise ConflictError(WORKSPACE_CHANGED)
    if backend.jobs is None:
        return Outcome(
            503,
            {
                "error": "unavailable",
                "message": "Automatic extraction is not available for this workspace.",
            },
        )
    try:
        backend.jobs.resume()
    except JobLedgerError as error:  # a ledger that cannot be used: extraction is unavailable
        return Outcome(503, {"error": error.code, "message": error.message})
    return Outcome(202, {"retryRequested": True, "revision": action.expected_revision})
