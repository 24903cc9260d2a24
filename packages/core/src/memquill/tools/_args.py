"""The write tools' argument models (``memory_remember``, ``memory_update``, ``memory_forget``).

Like the read models (:mod:`memquill.query._args`), they are the single source of each tool's
JSON schema. Write models forbid unknown keys, so a model can never smuggle in its own
``source``; content limits are the store's own constants. Ids and revisions may also be given
as the prefixes the read tools show (8+ characters of an id, 16+ hex digits of a revision); the
write path resolves them (:mod:`memquill.tools._resolve`).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field

from memquill.query._args import utf16_bounds
from memquill.store import MAX_CONTENT_UNITS

__all__ = [
    "ID_OR_PREFIX_PATTERN",
    "REVISION_OR_PREFIX_PATTERN",
    "ForgetArgs",
    "RememberArgs",
    "UpdateArgs",
]

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
RecordId = Annotated[
    str,
    Field(
        pattern=ID_OR_PREFIX_PATTERN,
        description=(
            "Record id from search, get or recent output; a unique prefix of 8 or more "
            "characters is enough."
        ),
    ),
]
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


class _Write(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RememberArgs(_Write):
    """Arguments of memory_remember."""

    content: Content
    idempotency_key: IdempotencyKey | None = None


class UpdateArgs(_Write):
    """Arguments of memory_update."""

    id: RecordId
    content: Content
    expected_revision: Revision


class ForgetArgs(_Write):
    """Arguments of memory_forget."""

    id: RecordId
    expected_revision: Revision
