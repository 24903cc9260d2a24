"""The write tools' results: durable receipts and errors (:class:`ToolResult`, what every
tool call returns, lives in :mod:`memquill.tools._tool_result`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

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
