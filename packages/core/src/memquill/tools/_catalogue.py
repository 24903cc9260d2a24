"""The write tools: their argument models, their receipts, and the full catalogue.

The read tools and what a :class:`~memquill.tools._specs.ToolSpec` is are in
:mod:`memquill.tools._specs`, apart from this module, so a read session never loads the write
models. The argument models are the single source of each write tool's JSON schema (as the read
models are, :mod:`memquill.query._models`): they forbid unknown keys, so a model can never smuggle
in its own ``source``; content limits are the store's own constants. A fact is named by its
``key`` or by the ``id`` of a version (exactly one of them). Ids and revisions may also be given
as the prefixes the read tools show (8+ characters of an id, 16+ hex digits of a revision); the
store expands them under its lock (:mod:`memquill.store._edits`). A :class:`WriteReceipt` is the
only evidence that memory was saved; a :class:`WriteError` says why nothing was written.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from memquill.errors import Messages
from memquill.query import utf16_bounds
from memquill.store import KEY_PATTERN, MAX_CONTENT_UNITS, MAX_KEY_CHARS, is_key
from memquill.tools._specs import READ_TOOLS, ToolHints, ToolSpec

Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_CONTENT_UNITS,
        description="The fact, preference or decision, in plain words.",
    ),
    utf16_bounds(1, MAX_CONTENT_UNITS),
]
IdempotencyKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="Optional: a retry with the same key saves nothing new.",
    ),
    utf16_bounds(1, 200),
]
ID_OR_PREFIX_PATTERN: Final = r"^[a-f0-9-]{8,36}$"
"""A record id, or a unique prefix of at least 8 characters (search shows ids in paths)."""
REVISION_OR_PREFIX_PATTERN: Final = r"^[a-f0-9]{16,64}$"
"""A revision, or its first 16 or more hex digits (as search, get and recent show it)."""
Revision = Annotated[
    str,
    Field(
        pattern=REVISION_OR_PREFIX_PATTERN,
        description=(
            "The record's revision (or the store revision) you read it at, as shown (16 hex "
            "digits) or in full."
        ),
    ),
]


def _key_rules(value: object) -> object:
    # Before the pattern and length checks, so every broken key gets the one message that
    # states the rules; anything but a string is left to the type check.
    if isinstance(value, str) and not is_key(value):
        raise ValueError(Messages.KEY_FORMAT)
    return value


KeyText = Annotated[
    str,
    Field(min_length=1, max_length=MAX_KEY_CHARS, pattern=KEY_PATTERN),
    BeforeValidator(_key_rules),
]
IdText = Annotated[str, Field(pattern=ID_OR_PREFIX_PATTERN)]
NewKey = Annotated[
    KeyText | None,
    Field(
        description=(
            "Optional: a short path-like name for the fact, such as prefs/coffee or "
            "projects/atlas/deploy-day (names of A-Z a-z 0-9 . _ - ~ joined by /). It stays "
            "the same when the fact is corrected; update and forget take it instead of the id."
        )
    ),
]
TargetKey = Annotated[
    KeyText | None,
    Field(description="The fact's key, as remembered or shown (give key or id)."),
]
TargetId = Annotated[
    IdText | None,
    Field(
        description=(
            "Record id from search, get or recent output, or a receipt; a unique prefix of 8 or "
            "more characters is enough (give id or key)."
        )
    ),
]


class _Write(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Targeted(_Write):
    """A write naming one fact, by ``id`` or by ``key``."""

    id: TargetId = None
    key: TargetKey = None

    @model_validator(mode="after")
    def _one_target(self) -> _Targeted:
        if (self.id is None) == (self.key is None):
            raise ValueError(Messages.TARGET_REQUIRED)
        return self


class RememberArgs(_Write):
    """Arguments of memory_remember."""

    content: Content
    key: NewKey = None
    idempotency_key: IdempotencyKey | None = None


class UpdateArgs(_Targeted):
    """Arguments of memory_update."""

    content: Content
    expected_revision: Revision


class ForgetArgs(_Targeted):
    """Arguments of memory_forget."""

    expected_revision: Revision


WriteOperation = Literal["remember", "update", "forget"]
"""The three write tools' operations, as receipts name them."""


class WriteReceipt(BaseModel):
    """A durable write receipt: the only evidence that memory was saved.

    Serialised with camelCase keys in this order: ``type, operation, status, recordId, key,
    revision, recordRevision, sourceSessionId, forgottenAt`` (``recordId``, ``key``,
    ``recordRevision`` and ``forgottenAt`` omitted when unknown or absent). ``forgottenAt`` is
    set on a ``blocked`` write whose words a forgotten fact held: when it was forgotten.
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    type: Literal["memory_write_receipt"] = "memory_write_receipt"
    operation: WriteOperation
    status: Literal["saved", "duplicate", "blocked"]
    record_id: Annotated[str | None, Field(alias="recordId")] = None
    key: Annotated[str | None, Field(description="The fact's key, when it has one.")] = None
    revision: Annotated[str, Field(description="The store revision after the write.")]
    record_revision: Annotated[
        str | None,
        Field(alias="recordRevision", description="The record's revision after the write."),
    ] = None
    source_session_id: Annotated[str, Field(alias="sourceSessionId")]
    forgotten_at: Annotated[
        str | None,
        Field(
            alias="forgottenAt",
            description="When a forgotten fact with these words was forgotten (blocked).",
        ),
    ] = None


class WriteError(BaseModel):
    """Why a write did not happen (nothing was written)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["memory_write_error"] = "memory_write_error"
    operation: WriteOperation
    code: str
    message: str


CATALOGUE: Final[tuple[ToolSpec, ...]] = (
    *READ_TOOLS,
    ToolSpec(
        name="memory_remember",
        title="Remember a fact",
        description=(
            "Save a fact, preference or decision the user asked you to remember. Give it a "
            "key (a short path such as prefs/coffee) to update or forget it by that name later. "
            "Needs write permission; attribution comes from the current session, not from "
            "arguments. Returns a durable write receipt: only status saved (or duplicate) means "
            "it is stored; a conflict names the fact that already has the key."
        ),
        args=RememberArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=False, idempotent=False),
    ),
    ToolSpec(
        name="memory_update",
        title="Correct a remembered fact",
        description=(
            "Correct a remembered fact: pass its key or its id, and the revision you read it at "
            "(from memory_search, memory_get or memory_recent, or an earlier receipt). The "
            "previous version stops being retrieved; the new version gets a new id and "
            "revision, and keeps the key. On a conflict, read it again and retry."
        ),
        args=UpdateArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    ),
    ToolSpec(
        name="memory_forget",
        title="Forget a remembered fact",
        description=(
            "Forget a remembered fact and all its earlier versions, by key or id and the "
            "revision you read it at. It disappears from search, recent and direct reads, its "
            "key is free again, and the same source can never bring it back."
        ),
        args=ForgetArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    ),
)
"""The six tools, read tools first."""
