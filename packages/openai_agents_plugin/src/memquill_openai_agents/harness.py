"""The OpenAI Agents adapter harness: memquill's tools driven through the SDK's calling path.

The parity suite (:mod:`memquill.testing`) and ``memquill demo`` open it through the
``openai-agents`` adapter this package registers. Each call goes through
``FunctionTool.on_invoke_tool`` with a ``ToolContext`` and the arguments as JSON text, which is
how the SDK's runner invokes a function tool; the answer is the function call output the model
gets. The SDK's function call output has no error flag, so the flag reported is the core's for
that very call, as is the structured result beside the text (the demo takes ids and revisions
from it). The catalogue is each tool's ``params_json_schema``, the strict schema the SDK sends.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from memquill import MemorySession, ToolResult
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill_openai_agents.tools import observed_tools

__all__ = ["OpenAIAgentsHarness"]


class OpenAIAgentsHarness:
    """Drives :func:`~memquill_openai_agents.memory_tools` for one session.

    Args:
        session: the session to build the tools for.
    """

    def __init__(self, session: MemorySession) -> None:
        self._seen: list[ToolResult] = []
        tools = observed_tools(session, self._seen.append)
        # Every one is a FunctionTool, typed as the SDK's Tool union: the test only narrows.
        self._tools: dict[str, FunctionTool] = {
            tool.name: tool for tool in tools if isinstance(tool, FunctionTool)
        }
        self._calls = 0

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as the SDK sends them: name, description, strict parameter schema."""
        return [
            ToolDescriptor(tool.name, tool.description, dict(tool.params_json_schema))
            for tool in self._tools.values()
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Invoke the tool as the runner does, and read back its output.

        Raises:
            LookupError: the tools offer no tool called ``name``.
        """
        tool = self._tools.get(name)
        if tool is None:
            raise LookupError(f"the OpenAI Agents tools offer no tool named {name!r}")
        self._seen.clear()
        self._calls += 1
        text = json.dumps(dict(arguments))
        context = ToolContext(
            None, tool_name=name, tool_call_id=f"call_{self._calls}", tool_arguments=text
        )
        output: Any = asyncio.run(_invoke(tool, context, text))
        result = self._seen[-1]
        return HarnessResult(str(output), result.is_error, result.structured)

    def close(self) -> None:
        """Nothing to release."""


async def _invoke(tool: FunctionTool, context: ToolContext[Any], arguments: str) -> Any:
    return await tool.on_invoke_tool(context, arguments)
