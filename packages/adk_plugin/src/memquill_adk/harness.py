"""The ADK adapter harness: memquill's tools driven through ADK's ``FunctionTool`` calling path.

The parity suite (:mod:`memquill.testing`) and ``memquill demo`` open it through the ``adk``
adapter this package registers. Each call goes through ``run_async``, the method ADK's flow
calls with a function call's arguments, and its answer is read back as the flow sends it to the
model: ``{"result": TEXT}``, or ``{"error": TEXT}`` with the error flag. The structured result
beside it is the one the core produced for that very call (the demo takes ids from it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, cast

from google.adk.tools.tool_context import ToolContext

from memquill import MemorySession, ToolResult
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill_adk.tools import MemquillFunctionTool, observed_tools

__all__ = ["AdkHarness"]


class AdkHarness:
    """Drives :func:`~memquill_adk.memory_tools` for one session.

    Args:
        session: the session to build the tools for.
    """

    def __init__(self, session: MemorySession) -> None:
        self._seen: list[ToolResult] = []
        tools = observed_tools(session, self._seen.append)
        self._tools: dict[str, MemquillFunctionTool] = {tool.name: tool for tool in tools}

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as ADK declares them to a model (``_get_declaration``)."""
        found: list[ToolDescriptor] = []
        for tool in self._tools.values():
            declaration = tool._get_declaration()  # pyright: ignore[reportPrivateUsage]
            schema = cast("dict[str, Any]", declaration.parameters_json_schema)
            found.append(
                ToolDescriptor(declaration.name or "", declaration.description or "", schema)
            )
        return found

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call the tool as ADK's flow does, and read back what it would send.

        Raises:
            LookupError: the tools offer no tool called ``name``.
        """
        tool = self._tools.get(name)
        if tool is None:
            raise LookupError(f"the ADK tools offer no tool named {name!r}")
        self._seen.clear()
        context = cast(ToolContext, None)  # memquill's tools never read it
        answer = asyncio.run(tool.run_async(args=dict(arguments), tool_context=context))
        is_error = "error" in answer
        text = str(answer["error"] if is_error else answer["result"])
        structured = self._seen[-1].structured if self._seen else None
        return HarnessResult(text, is_error, structured)

    def close(self) -> None:
        """Nothing to release."""
