"""memquill's six tools as Anthropic SDK function tools (``memory_search`` and the rest).

Beside the memory tool, a Claude application can offer the core's own tools: keyword search
over the workspace's notes and facts (Claude's files included), reading a note, the recent
list, and the key-aware writes. :func:`memory_tools` gives ``BetaFunctionTool``s and
:func:`async_memory_tools` ``BetaAsyncFunctionTool``s, for ``tool_runner`` on ``Anthropic`` or
``AsyncAnthropic``. Names, descriptions and input schemas are the core's (the write schemas
refuse unknown keys), the text is the core's, and a failure is raised as ``ToolError`` with
that text, so the runner sends it back with ``is_error`` set, as every adapter sets its
framework's error flag.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, cast

from anthropic.lib.tools import BetaAsyncFunctionTool, BetaFunctionTool, ToolError
from anthropic.types.tool_param import InputSchema

from memquill import MemorySession, MemoryToolset, ToolResult
from memquill.tools import MemoryTool

__all__ = ["async_memory_tools", "memory_tools", "observed_tools"]

SyncFunction = Callable[..., str]
AsyncFunction = Callable[..., Coroutine[Any, Any, str]]
Observer = Callable[[ToolResult], None]


def memory_tools(session: MemorySession) -> list[BetaFunctionTool[SyncFunction]]:
    """The session's tools (all six with write access, the three read tools else)."""
    return observed_tools(session, None)


def async_memory_tools(session: MemorySession) -> list[BetaAsyncFunctionTool[AsyncFunction]]:
    """:func:`memory_tools` for ``AsyncAnthropic``: file work runs on a worker thread."""
    return [_async_tool(tool) for tool in MemoryToolset(session).tools]


def observed_tools(
    session: MemorySession, observe: Observer | None
) -> list[BetaFunctionTool[SyncFunction]]:
    """:func:`memory_tools`, handing each call's whole result to ``observe`` too (a tool result
    carries text only; the harness reads the structured result beside it this way)."""
    return [_sync_tool(tool, observe) for tool in MemoryToolset(session).tools]


def _sync_tool(tool: MemoryTool, observe: Observer | None) -> BetaFunctionTool[SyncFunction]:
    def run(**arguments: Any) -> str:
        result = tool.invoke(arguments)
        if observe is not None:
            observe(result)
        return _text(result)

    return BetaFunctionTool(
        run, name=tool.name, description=tool.description, input_schema=_schema(tool)
    )


def _async_tool(tool: MemoryTool) -> BetaAsyncFunctionTool[AsyncFunction]:
    async def run(**arguments: Any) -> str:
        return _text(await tool.ainvoke(arguments))

    return BetaAsyncFunctionTool(
        run, name=tool.name, description=tool.description, input_schema=_schema(tool)
    )


def _schema(tool: MemoryTool) -> InputSchema:
    return cast(InputSchema, tool.spec.input_schema())


def _text(result: ToolResult) -> str:
    """The result's text; a failure is raised with it, for the runner's ``is_error``."""
    if result.is_error:
        raise ToolError(result.text)
    return result.text
