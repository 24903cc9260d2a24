"""memquill's six tools as ADK ``FunctionTool``s, for agents that manage memory themselves.

Give them to an ``LlmAgent`` (``tools=memory_tools(session)``). Each tool's name, description
and parameters are the core's: the declaration carries the core's JSON schema as
``parameters_json_schema`` (the write schemas refuse unknown keys), not one inferred from a
Python signature. A call answers ``{"result": TEXT}``, and a failure ``{"error": TEXT}`` (the
shape ADK's own tools use for a failed call, which its telemetry counts as a tool error), the
text being the core's. The core's file work runs on a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.tools.function_tool import FunctionTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from typing_extensions import override

from memquill import MemorySession, MemoryToolset, ToolResult
from memquill.tools import MemoryTool

__all__ = ["MemquillFunctionTool", "memory_tools", "observed_tools"]

Observer = Callable[[ToolResult], None]


class MemquillFunctionTool(FunctionTool):
    """One memquill tool as an ADK ``FunctionTool`` (see the module docstring).

    Args:
        tool: the core's tool, bound to a session.
        observe: handed each call's whole result too (the harness reads the structured result).
    """

    def __init__(self, tool: MemoryTool, observe: Observer | None = None) -> None:
        async def call(**arguments: Any) -> dict[str, str]:  # pragma: no cover - see run_async
            return _answer(await tool.ainvoke(arguments))

        super().__init__(call)
        self.name = tool.name
        self.description = tool.description
        self.memquill_tool = tool
        self._observe = observe

    @override
    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema=self.memquill_tool.spec.input_schema(),
        )

    @override
    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        """The core decides: the arguments go to the core's tool as the model sent them."""
        result = await self.memquill_tool.ainvoke(args)
        if self._observe is not None:
            self._observe(result)
        return _answer(result)


def memory_tools(session: MemorySession) -> list[MemquillFunctionTool]:
    """The session's tools (all six with write access, the three read tools else)."""
    return observed_tools(session, None)


def observed_tools(session: MemorySession, observe: Observer | None) -> list[MemquillFunctionTool]:
    """:func:`memory_tools`, handing each call's whole result to ``observe`` too."""
    return [MemquillFunctionTool(tool, observe) for tool in MemoryToolset(session).tools]


def _answer(result: ToolResult) -> dict[str, str]:
    return {"error": result.text} if result.is_error else {"result": result.text}
