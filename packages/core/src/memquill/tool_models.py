"""The argument and result models of the six memory tools.

These pydantic models are the single source of every tool's JSON schema: LangChain uses them as
``args_schema``, LlamaIndex as ``fn_schema``, MCP as the input and output schemas. Lengths are
checked in UTF-16 units (the unit of every memquill limit), on top of the schema's bounds.
Write models forbid unknown keys, so a model can never smuggle in its own ``source``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from memquill.errors import InvalidInputError
from memquill.text import utf16_len

__all__ = [
    "ForgetArgs",
    "GetArgs",
    "RecentArgs",
    "RememberArgs",
    "SearchArgs",
    "ToolResult",
    "UpdateArgs",
    "WriteError",
    "WriteReceipt",
    "parse_args",
    "validation_message",
]

ArgsT = TypeVar("ArgsT", bound=BaseModel)

REVISION_PATTERN: Final = r"^[a-f0-9]{64}$"
ID_PATTERN: Final = r"^[a-f0-9-]{36}$"
MAX_CHAR_START: Final = 512 * 1024


def _units(low: int, high: int) -> AfterValidator:
    def check(value: str) -> str:
        if not low <= utf16_len(value) <= high:
            raise ValueError(f"length must be {low}–{high} UTF-16 units")
        return value

    return AfterValidator(check)


def _not_bool(value: object) -> object:
    # ``True`` is an ``int`` to Python, but never a line number or a limit.
    if isinstance(value, bool):
        raise ValueError("Input should be a valid integer")
    return value


Int = Annotated[int, BeforeValidator(_not_bool)]

Query = Annotated[
    str,
    Field(min_length=1, max_length=2000, description="Keywords to look for (any language)."),
    _units(1, 2000),
]
Tag = Annotated[
    str,
    Field(min_length=1, max_length=100, description="A tag, with or without '#'."),
    _units(1, 100),
]
FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2000,
        description="Workspace-relative path, as shown in search results.",
    ),
    _units(1, 2000),
]
Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=16000,
        description="The fact, preference or decision, in plain words.",
    ),
    _units(1, 16000),
]
IdempotencyKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="Optional: a retry with the same key saves nothing new.",
    ),
    _units(1, 200),
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


class _Read(BaseModel):
    model_config = ConfigDict(frozen=True)


class _Write(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SearchArgs(_Read):
    """Arguments of memory_search."""

    query: Query
    tags: Annotated[
        list[Tag] | None,
        Field(max_length=20, description="Only notes with any of these tags (OR)."),
    ] = None
    file_type: Annotated[
        Literal["all", "daily", "longterm", "notes"],
        Field(description="daily notes, long-term memory (incl. records), other notes, or all."),
    ] = "all"
    limit: Annotated[Int, Field(ge=1, le=20, description="How many results (1–20).")] = 5


class GetArgs(_Read):
    """Arguments of memory_get."""

    file_path: FilePath
    line_start: Annotated[
        Int | None, Field(ge=1, description="First line, 1-based (default 1).")
    ] = None
    line_end: Annotated[
        Int | None, Field(ge=1, description="Last line, inclusive (default: end of file).")
    ] = None
    char_start: Annotated[
        Int | None,
        Field(
            ge=0,
            le=MAX_CHAR_START,
            description="Continue a long read: pass next_char_start with the same lines.",
        ),
    ] = None

    @model_validator(mode="after")
    def _ordered(self) -> GetArgs:
        start, end = self.line_start, self.line_end
        if start is not None and end is not None and end < start:
            raise ValueError("line_end must be greater than or equal to line_start.")
        return self


class RecentArgs(_Read):
    """Arguments of memory_recent."""

    days: Annotated[
        Int, Field(ge=1, le=7, description="How many recent daily files to include (1–7).")
    ] = 3


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


class WriteReceipt(BaseModel):
    """A durable write receipt: the only evidence that memory was saved.

    Serialised with camelCase keys in this order: ``type, operation, status, recordId,
    revision, recordRevision, sourceSessionId`` (``recordId``/``recordRevision`` omitted when
    unknown).
    """

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    type: Literal["memory_write_receipt"] = "memory_write_receipt"
    operation: Literal["remember", "update", "forget"]
    status: Literal["saved", "duplicate", "blocked"]
    record_id: Annotated[str | None, Field(alias="recordId")] = None
    revision: Annotated[str, Field(description="The store revision after the write.")]
    record_revision: Annotated[
        str | None,
        Field(alias="recordRevision", description="The record's revision after the write."),
    ] = None
    source_session_id: Annotated[str, Field(alias="sourceSessionId")]


class WriteError(BaseModel):
    """Why a write did not happen (nothing was written)."""

    model_config = ConfigDict(frozen=True)

    type: Literal["memory_write_error"] = "memory_write_error"
    operation: Literal["remember", "update", "forget"]
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call returns.

    Attributes:
        text: the text the model sees, identical on every adapter.
        structured: the same result as JSON-ready data (hits, page, receipt or error).
        is_error: whether the call failed; adapters set their native error flag from it.
    """

    text: str
    structured: dict[str, Any] | None
    is_error: bool


def validation_message(error: ValidationError) -> str:
    """A stable, readable rendering of a validation error: ``field: problem; …``."""
    parts: list[str] = []
    for detail in error.errors(include_url=False, include_context=False, include_input=False):
        message = detail["msg"].removeprefix("Value error, ")
        location = ".".join(str(part) for part in detail["loc"])
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts)


def parse_args(model: type[ArgsT], values: Mapping[str, object]) -> ArgsT:
    """Validate ``values`` with a tool's argument model.

    Raises:
        InvalidInputError: with :func:`validation_message` as its message.
    """
    try:
        return model.model_validate(dict(values))
    except ValidationError as error:
        raise InvalidInputError(validation_message(error)) from None
