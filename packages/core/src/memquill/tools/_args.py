"""The write tools' argument models (``memory_remember``, ``memory_update``, ``memory_forget``).

Like the read models (:mod:`memquill.query._args`), they are the single source of each tool's
JSON schema. Write models forbid unknown keys, so a model can never smuggle in its own
``source``; their limits are the store's own constants.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from memquill.query._args import utf16_bounds
from memquill.store import ID_PATTERN, MAX_CONTENT_UNITS, REVISION_PATTERN

__all__ = ["ForgetArgs", "RememberArgs", "UpdateArgs"]

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
RecordId = Annotated[
    str, Field(pattern=ID_PATTERN, description="Record id from search, get or recent output.")
]
Revision = Annotated[
    str,
    Field(
        pattern=REVISION_PATTERN,
        description="The record's revision (or the store revision) you read it at.",
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
