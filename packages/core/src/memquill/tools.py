"""The tool catalogue: six memory tools, owned completely by the core.

Each :class:`ToolSpec` fixes a tool's name, title, description, argument and result models,
access level and behaviour hints. :class:`MemoryToolset` binds the catalogue to one
:class:`~memquill.scope.MemorySession` and runs the handlers. Adapters map these fields onto
their framework and add nothing: no wording, formatting, ranking or error text of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Literal

from pydantic import BaseModel, ValidationError

from memquill import writes
from memquill.errors import InvalidInputError
from memquill.prompts import system_prompt
from memquill.query import MemoryQuery
from memquill.query_models import GetResult, QueryResponse, RecentResult, ResultT, SearchResult
from memquill.render import render_get, render_recent, render_search
from memquill.scope import MemorySession
from memquill.tool_models import (
    ForgetArgs,
    GetArgs,
    RecentArgs,
    RememberArgs,
    SearchArgs,
    ToolResult,
    UpdateArgs,
    WriteReceipt,
    validation_message,
)

__all__ = ["CATALOGUE", "MemoryTool", "MemoryToolset", "ToolHints", "ToolSpec"]

Access = Literal["read", "write"]


@dataclass(frozen=True, slots=True)
class ToolHints:
    """Behaviour hints, as MCP's tool annotations define them (hints, not guarantees)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """Everything about a tool except the session it runs for.

    Attributes:
        name: the tool name every adapter uses.
        title: a short human title.
        description: the description every adapter sends to the model, verbatim.
        args: the argument model (the input schema).
        result: the model of the structured result on success (the output schema).
        access: ``read`` tools exist for every session; ``write`` tools only with write access.
        hints: behaviour hints.
    """

    name: str
    title: str
    description: str
    args: type[BaseModel]
    result: type[BaseModel]
    access: Access
    hints: ToolHints

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.args.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        """The JSON schema of the structured result on success."""
        return self.result.model_json_schema(by_alias=True)


_READ: Final = ToolHints(read_only=True, destructive=False, idempotent=True)

CATALOGUE: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        name="memory_search",
        title="Search memory",
        description=(
            "Search the workspace's memory - notes, daily notes, long-term memory and "
            "remembered facts - by keywords, in any language. Filter by tags and by file type; "
            "among equally good matches, recent daily notes rank higher. Works without a model "
            "or credentials. Returns ranked results with their source path, the line where the "
            "match is and an excerpt around it, and for a remembered fact its id and revision; "
            "read on from that line with memory_get."
        ),
        args=SearchArgs,
        result=SearchResult,
        access="read",
        hints=_READ,
    ),
    ToolSpec(
        name="memory_get",
        title="Read a memory source",
        description=(
            "Read a workspace-relative memory source, such as a path memory_search returned. "
            "Lines are 1-based and inclusive. One response holds at most 3000 characters; to "
            "continue, call again with char_start set to the next_char_start it reports and "
            "the same file_path and lines. Internal files and forgotten history cannot be read."
        ),
        args=GetArgs,
        result=GetResult,
        access="read",
        hints=_READ,
    ),
    ToolSpec(
        name="memory_recent",
        title="Review recent memory",
        description=(
            "Review long-term memory, the most recent daily notes and the remembered facts "
            "(newest first), with their source paths. Call it at the start of a conversation."
        ),
        args=RecentArgs,
        result=RecentResult,
        access="read",
        hints=_READ,
    ),
    ToolSpec(
        name="memory_remember",
        title="Remember a fact",
        description=(
            "Save a fact, preference or decision the user asked you to remember. Needs write "
            "permission; attribution comes from the current session, not from arguments. "
            "Returns a durable write receipt: only status saved (or duplicate) means it is "
            "stored."
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
            "Correct a remembered fact: pass its id and the revision you read it at (from "
            "memory_search, memory_get or memory_recent, or an earlier receipt). The previous "
            "version stops being retrieved. On a conflict, read it again and retry."
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
            "Forget a remembered fact and all its earlier versions, by id and the revision you "
            "read it at. It disappears from search, recent and direct reads, and the same "
            "source can never bring it back."
        ),
        args=ForgetArgs,
        result=WriteReceipt,
        access="write",
        hints=ToolHints(read_only=False, destructive=True, idempotent=True),
    ),
)
"""The six tools, read tools first."""


class MemoryTool:
    """A :class:`ToolSpec` bound to a session: call it with raw arguments.

    Args:
        spec: what the tool is.
        handler: runs the tool on validated arguments.
        invalid: the result for arguments that fail validation, given the message.
    """

    def __init__(
        self,
        spec: ToolSpec,
        handler: Callable[[Any], ToolResult],
        invalid: Callable[[str], ToolResult],
    ) -> None:
        self.spec = spec
        self._handler = handler
        self._invalid = invalid

    @property
    def name(self) -> str:
        """The tool name."""
        return self.spec.name

    @property
    def description(self) -> str:
        """The description sent to the model."""
        return self.spec.description

    def invoke(self, arguments: Mapping[str, Any] | BaseModel) -> ToolResult:
        """Validate ``arguments`` with the tool's model and run it. Never raises for bad input."""
        if isinstance(arguments, self.spec.args):
            return self._handler(arguments)
        raw = arguments.model_dump() if isinstance(arguments, BaseModel) else dict(arguments)
        try:
            parsed = self.spec.args.model_validate(raw)
        except ValidationError as error:
            return self.reject(error)
        return self._handler(parsed)

    async def ainvoke(self, arguments: Mapping[str, Any] | BaseModel) -> ToolResult:
        """:meth:`invoke` on a worker thread, so file I/O never blocks the event loop."""
        return await asyncio.to_thread(self.invoke, arguments)

    def reject(self, error: ValidationError) -> ToolResult:
        """The result for arguments that failed validation (a framework may validate first)."""
        return self._invalid(validation_message(error))

    def __repr__(self) -> str:
        return f"MemoryTool({self.name!r})"


class MemoryToolset:
    """The memory tools of one session: all six with write access, the three read tools else.

    Args:
        session: who calls, on which workspace, with which access.
        query: the query engine to use (default: the session's, shared with anything else
            built on the session).
    """

    def __init__(self, session: MemorySession, *, query: MemoryQuery | None = None) -> None:
        self.session = session
        self.query = query or session.query
        bindings: dict[str, tuple[Callable[[Any], ToolResult], Callable[[str], ToolResult]]] = {
            "memory_search": (self._search, _read_failure(SearchResult, render_search)),
            "memory_get": (self._get, _read_failure(GetResult, render_get)),
            "memory_recent": (self._recent, _read_failure(RecentResult, render_recent)),
            "memory_remember": (partial(writes.remember, session), _write_failure("remember")),
            "memory_update": (partial(writes.update, session), _write_failure("update")),
            "memory_forget": (partial(writes.forget, session), _write_failure("forget")),
        }
        mounted = [s for s in CATALOGUE if s.access == "read" or session.access == "read_write"]
        self.tools: tuple[MemoryTool, ...] = tuple(
            MemoryTool(spec, *bindings[spec.name]) for spec in mounted
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The mounted tool names, in catalogue order."""
        return tuple(tool.name for tool in self.tools)

    @property
    def writes_mounted(self) -> bool:
        """Whether the write tools are part of this set."""
        return any(tool.spec.access == "write" for tool in self.tools)

    def __getitem__(self, name: str) -> MemoryTool:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise KeyError(name)

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        """Call a mounted tool by name.

        Raises:
            KeyError: no such tool is mounted.
        """
        return self[name].invoke(arguments)

    def system_prompt(self) -> str:
        """The prompt fragments for exactly the tools mounted here."""
        return system_prompt(write=self.writes_mounted)

    def _search(self, args: SearchArgs) -> ToolResult:
        tags = tuple(args.tags or ())
        return _read_result(
            self.query.search(args.query, tags=tags, file_type=args.file_type, limit=args.limit)
        )

    def _get(self, args: GetArgs) -> ToolResult:
        return _read_result(
            self.query.get(
                args.file_path,
                line_start=args.line_start,
                line_end=args.line_end,
                char_start=args.char_start or 0,
            )
        )

    def _recent(self, args: RecentArgs) -> ToolResult:
        return _read_result(self.query.recent(days=args.days))


def _read_result(response: QueryResponse[Any]) -> ToolResult:
    return ToolResult(response.text, response.result.model_dump(mode="json"), not response.ok)


def _read_failure(
    model: type[ResultT], render: Callable[[ResultT], str]
) -> Callable[[str], ToolResult]:
    def failure(message: str) -> ToolResult:
        result = model(error=message, error_code=InvalidInputError.code)
        return _read_result(QueryResponse(render(result), result))

    return failure


def _write_failure(operation: writes.WriteOperation) -> Callable[[str], ToolResult]:
    return lambda message: writes.write_failure(operation, InvalidInputError(message))
