"""The Anthropic adapter harness: memquill's tools driven through the SDK's function tools.

The parity suite (:mod:`memquill.testing`) and ``memquill demo`` open it through the
``anthropic`` adapter this package registers. Each call goes through ``BetaFunctionTool.call``,
the method the SDK's tool runner calls with a ``tool_use`` block's input, and a ``ToolError`` is
read back as the runner reads it: its text, with ``is_error`` set. A tool result carries text
only, so the structured result beside it is the one the core produced for that very call (the
demo takes ids and revisions from it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anthropic.lib.tools import BetaFunctionTool, ToolError

from memquill import MemorySession, ToolResult
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill_anthropic.tools import SyncFunction, observed_tools

__all__ = ["AnthropicHarness"]


class AnthropicHarness:
    """Drives :func:`~memquill_anthropic.memory_tools` for one session.

    Args:
        session: the session to build the tools for.
    """

    def __init__(self, session: MemorySession) -> None:
        self._seen: list[ToolResult] = []
        tools = observed_tools(session, self._seen.append)
        self._tools: dict[str, BetaFunctionTool[SyncFunction]] = {t.name: t for t in tools}

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as the SDK sends them to the Messages API (``to_dict``)."""
        return [
            ToolDescriptor(tool.name, tool.description, dict(tool.to_dict()["input_schema"]))
            for tool in self._tools.values()
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call the tool as the tool runner does, and read back what it would send.

        Raises:
            LookupError: the tools offer no tool called ``name``.
        """
        tool = self._tools.get(name)
        if tool is None:
            raise LookupError(f"the Anthropic tools offer no tool named {name!r}")
        self._seen.clear()
        try:
            text, is_error = str(tool.call(dict(arguments))), False
        except ToolError as error:
            text, is_error = str(error.content), True
        structured = self._seen[-1].structured if self._seen else None
        return HarnessResult(text, is_error, structured)

    def close(self) -> None:
        """Nothing to release."""
