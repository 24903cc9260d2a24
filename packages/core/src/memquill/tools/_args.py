"""The write tools' argument models (``memory_remember``, ``memory_update``, ``memory_forget``).

Like the read models (:mod:`memquill.query._args`), they are the single source of each tool's
JSON schema. Write models forbid unknown keys, so a model can never smuggle in its own
``source``; content limits are the store's own constants. A fact is named by its ``key`` or by
the ``id`` of a version (exactly one of them). Ids and revisions may also be given as the
prefixes the read tools show (8+ characters of an id, 16+ hex digits of a revision); the
store expands them under its lock (:mod:`memquill.store._edits`).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from memquill.errors import Messages
from memquill.query import utf16_bounds
from memquill.store import KEY_PATTERN, MAX_CONTENT_UNITS, MAX_KEY_CHARS, is_key

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
