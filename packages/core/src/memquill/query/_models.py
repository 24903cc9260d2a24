"""The read tools' models: the arguments each takes and what each returns, as data.

The argument models (and the field types every tool argument model shares) are the single
source of each read tool's JSON schema (LangChain's ``args_schema``, LlamaIndex's
``fn_schema``, MCP's input schema). The engine takes them already validated: arguments are
checked once, where a call enters memquill (the tool boundary, the CLI, a retriever). Lengths
are checked in UTF-16 units, the unit of every memquill limit.

The result models (search hits, a page of a source, recent memory) are what the engine
(:mod:`memquill.query._engine`) returns; :mod:`memquill.query._render` turns them into the
exact text a model or a person sees (spec 6.5–6.7). At the tool boundary a failure becomes
the same model with ``error`` (the message) and ``error_code`` set.

Each model is built on its first use (validation or schema), never at import. A search from
the shell loads none of them (:mod:`memquill.query._plain`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final, Literal, TypeVar

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
from memquill.foundation.text import utf16_len
from memquill.query._plain import MAX_SEARCH_LIMIT, FileType

ArgsT = TypeVar("ArgsT", bound=BaseModel)

MAX_CHAR_START: Final = 512 * 1024
"""The largest ``char_start`` of a ``get`` (the read limit of one file)."""


def utf16_bounds(low: int, high: int) -> AfterValidator:
    """A validator keeping a string's length within ``low``–``high`` UTF-16 units."""

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


NOT_BOOL: Final = BeforeValidator(_not_bool)
"""Refuses booleans. Put it after an integer's bounds (``Annotated[int, Field(ge=1), NOT_BOOL]``):
bounds placed outside a validator cannot reach the integer schema, and pydantic then writes them
into the JSON schema as ``ge``/``le``, keywords no JSON Schema validator or model knows."""

Int = Annotated[int, NOT_BOOL]
"""An integer argument that refuses booleans (unbounded: see :data:`NOT_BOOL` for bounds)."""

Query = Annotated[
    str,
    Field(min_length=1, max_length=2000, description="Keywords to look for (any language)."),
    utf16_bounds(1, 2000),
]
Tag = Annotated[
    str,
    Field(min_length=1, max_length=100, description="A tag, with or without '#'."),
    utf16_bounds(1, 100),
]
FilePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=2000,
        description="Workspace-relative path, as shown in search results.",
    ),
    utf16_bounds(1, 2000),
]


class _Read(BaseModel):
    # Each model's validator is built when it is first used: a process that searches once
    # never pays for the arguments of get and recent (cold start).
    model_config = ConfigDict(frozen=True, defer_build=True)


class SearchArgs(_Read):
    """Arguments of memory_search."""

    query: Query
    tags: Annotated[
        list[Tag] | None,
        Field(max_length=20, description="Only notes with any of these tags (OR)."),
    ] = None
    file_type: Annotated[
        FileType,
        Field(description="daily notes, long-term memory (incl. records), other notes, or all."),
    ] = "all"
    limit: Annotated[
        int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="How many results (1–20)."), NOT_BOOL
    ] = 5


class GetArgs(_Read):
    """Arguments of memory_get."""

    file_path: FilePath
    line_start: Annotated[
        Annotated[int, Field(ge=1)] | None,
        NOT_BOOL,
        Field(description="First line, 1-based (default 1)."),
    ] = None
    line_end: Annotated[
        Annotated[int, Field(ge=1)] | None,
        NOT_BOOL,
        Field(description="Last line, inclusive (default: end of file)."),
    ] = None
    char_start: Annotated[
        Annotated[int, Field(ge=0, le=MAX_CHAR_START)] | None,
        NOT_BOOL,
        Field(description="Continue a long read: pass next_char_start with the same lines."),
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
        int,
        Field(ge=1, le=7, description="How many recent daily files to include (1–7)."),
        NOT_BOOL,
    ] = 3


def validation_message(error: ValidationError) -> str:
    """A stable, readable rendering of a validation error: ``field: problem; …``."""
    parts: list[str] = []
    for detail in error.errors(include_url=False, include_context=False, include_input=False):
        message = detail["msg"].removeprefix("Value error, ")
        location = ".".join(str(part) for part in detail["loc"])
        parts.append(f"{location}: {message}" if location else message)
    return "; ".join(parts)


def parse_args(model: type[ArgsT], values: Mapping[str, object] | BaseModel) -> ArgsT:
    """Validate ``values`` with a tool's argument model (an instance of it passes as is).

    Raises:
        InvalidInputError: with :func:`validation_message` as its message.
    """
    if isinstance(values, model):
        return values
    raw = values.model_dump() if isinstance(values, BaseModel) else dict(values)
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise InvalidInputError(validation_message(error)) from None


HitKind = Literal["note", "record"]
SectionKind = Literal["longterm", "daily", "record"]


class _Frozen(BaseModel):
    # Built on first use: a process that searches once never builds a page or recent memory.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class SearchHit(_Frozen):
    """One search result.

    Attributes:
        rank: 1-based position.
        path: workspace path (``memory/records/<id>.md`` for a record).
        line: 1-based line of the first shown line that holds a query term.
        score: the score as shown (two decimals).
        heading: the heading of that line's section (may be empty).
        snippet: the excerpt around the best-matching line, at most 300 UTF-16 units
            (``docs/ranking.md``).
        source: ``workspace-file`` or the record's provenance line.
        kind: ``note`` or ``record``.
        record_id: the record's id, for a record.
        record_revision: the record revision (what ``update``/``forget`` take), for a record.
        key: the fact's key, for a record that has one.
    """

    rank: int
    path: str
    line: int
    score: float
    heading: str
    snippet: str
    source: str
    kind: HitKind
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None


class SearchResult(_Frozen):
    """The hits shown (at most ``limit``), warnings, and failure details.

    Attributes:
        hits: the results, best first.
        warnings: partial-scan, skipped-file and managed-memory warnings, in order.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure (``invalid``, ``access_denied``, ...).
        reranked: the hits are in a model's order (optional model assistance), not keyword
            order.
        ranking_notice: why a model's order was not used (``Memory ranking <status>:
            <reason>. Using keyword order.``), shown as the text's first line.
    """

    hits: tuple[SearchHit, ...] = ()
    warnings: tuple[str, ...] = ()
    error: str | None = None
    error_code: str | None = None
    reranked: bool = False
    ranking_notice: str | None = None


class GetResult(_Frozen):
    """One page of a source.

    Attributes:
        path: the normalised workspace path.
        line_start: first line of the selection (1-based).
        line_end: last line of the selection (inclusive), ``None`` for the end of the file.
        char_start: offset of this page within the selection, in UTF-16 units.
        content: the page (at most 3000 units).
        next_char_start: where the next page starts, or ``None`` when this is the last one.
        links: wiki-link targets on this page (at most 20).
        line_count: the lines of the whole source as an editor counts them (a final newline
            ends the last line; ``None`` on failure), so a caller can tell an empty page past
            the end from an empty file.
        source: ``workspace-file`` or the record's provenance line.
        kind: ``note`` or ``record``.
        record_id: the record's id, for a record.
        record_revision: the record revision, for a record.
        key: the fact's key, for a record that has one.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure.
    """

    path: str | None = None
    line_start: int = 1
    line_end: int | None = None
    char_start: int = 0
    content: str = ""
    next_char_start: int | None = None
    links: tuple[str, ...] = ()
    line_count: int | None = None
    source: str | None = None
    kind: HitKind | None = None
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None
    error: str | None = None
    error_code: str | None = None


class RecentSection(_Frozen):
    """One part of the recent-memory review.

    Attributes:
        kind: ``longterm``, ``daily`` or ``record``.
        path: workspace path of the source.
        content: the text shown (trimmed, cut to 500 or 800 units).
        truncated: ``content`` was cut.
        source: ``workspace-file`` or the record's provenance line.
        record_id: the record's id, for a record.
        record_revision: the record revision, for a record.
        key: the fact's key, for a record that has one.
    """

    kind: SectionKind
    path: str
    content: str
    truncated: bool = False
    source: str = "workspace-file"
    record_id: str | None = None
    record_revision: str | None = None
    key: str | None = None


class RecentResult(_Frozen):
    """Long-term memory, the newest daily files and the active records (newest first).

    Attributes:
        sections: in display order.
        warnings: files or folders that were skipped, with why.
        managed_unavailable: why managed records could not be read, if so.
        error: the failure message (``None`` on success).
        error_code: a stable code for the failure.
    """

    sections: tuple[RecentSection, ...] = ()
    warnings: tuple[str, ...] = ()
    managed_unavailable: str | None = None
    error: str | None = None
    error_code: str | None = None


ResultT = TypeVar("ResultT", SearchResult, GetResult, RecentResult)
"""Any read tool's result model."""
