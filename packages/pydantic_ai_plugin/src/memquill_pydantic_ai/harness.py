"""The Pydantic AI adapter harness: memquill's tools driven through a Pydantic AI agent run.

The parity suite (:mod:`memquill.testing`) and ``memquill demo`` open it through the
``pydantic-ai`` adapter this package registers. Each call is one agent run whose
``FunctionModel`` asks for that tool call and then ends the run: the agent loop validates,
calls :class:`~memquill_pydantic_ai.MemquillToolset` and answers with a ``ToolReturnPart``,
whose content is the text and whose ``outcome`` (``retried`` after ``ModelRetry``, ``failed``
after ``ToolFailed``) is the error flag. The catalogue is the tool definitions the model is
given. A tool result carries text only, so the structured result beside it is the one the core
produced for that very call (the demo takes ids and revisions from it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from memquill import MemorySession, ToolResult
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill_pydantic_ai.toolset import MemquillToolset

__all__ = ["PydanticAIHarness"]


class PydanticAIHarness:
    """Drives a :class:`~memquill_pydantic_ai.MemquillToolset` for one session.

    Args:
        session: the session to build the toolset for.
    """

    def __init__(self, session: MemorySession) -> None:
        self._seen: list[ToolResult] = []
        self._call: tuple[str, dict[str, Any]] | None = None
        self._offered: list[ToolDescriptor] = []
        self._returned: ToolReturnPart[Any] | None = None
        self._agent = Agent(
            FunctionModel(self._model),
            toolsets=[MemquillToolset(session, observe=self._seen.append)],
        )

    def _model(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        """The scripted model: one tool call, then a closing text once its result is back."""
        self._offered = [
            ToolDescriptor(tool.name, tool.description or "", dict(tool.parameters_json_schema))
            for tool in info.function_tools
        ]
        last = messages[-1]
        parts: list[Any] = list(last.parts) if isinstance(last, ModelRequest) else []
        returned: list[ToolReturnPart[Any]] = [
            part for part in parts if isinstance(part, ToolReturnPart)
        ]
        if returned or self._call is None:
            self._returned = returned[-1] if returned else None
            return ModelResponse(parts=[TextPart("done")])
        name, arguments = self._call
        return ModelResponse(parts=[ToolCallPart(name, arguments)])

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as the agent offers them to its model (``AgentInfo.function_tools``)."""
        self._call = None
        self._run("list the tools")
        return list(self._offered)

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call the tool through an agent run, and read back the tool result the model got.

        Raises:
            LookupError: the toolset offers no tool called ``name``.
        """
        self._seen.clear()
        self._returned = None
        self._call = (name, dict(arguments))
        self._run(f"call {name}")
        returned = self._returned
        if returned is None or returned.tool_name != name or not self._seen:
            raise LookupError(f"the Pydantic AI toolset offers no tool named {name!r}")
        content: Any = returned.content
        text = content if isinstance(content, str) else str(content)
        return HarnessResult(text, returned.outcome != "success", self._seen[-1].structured)

    def _run(self, prompt: str) -> None:
        # asyncio.run closes its loop; Agent.run_sync leaves a loop set on the thread, unclosed.
        asyncio.run(self._agent.run(prompt))

    def close(self) -> None:
        """Nothing to release."""
