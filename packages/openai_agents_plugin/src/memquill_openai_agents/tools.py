"""memquill's six tools as OpenAI Agents SDK ``FunctionTool``s.

``Agent(name=..., tools=memory_tools(session))`` gives the agent ``memory_search``,
``memory_get`` and ``memory_recent`` (and, with write access, ``memory_remember``,
``memory_update`` and ``memory_forget``) with the core's names and descriptions. The list is
typed as the SDK's ``list[Tool]`` (what ``Agent.tools`` takes; a list is invariant), so
``memory_tools(session) + [my_tool]`` type-checks with any of the host's tools. The parameters
are the core's JSON schema made strict by the SDK's own ``ensure_strict_json_schema`` (every
property required, an optional one sent as ``null``, no unknown keys), as the SDK sends its own
function tools; ``null`` is what the core's optional fields already accept.

The answer is the core's text. A failure is answered with the core's failure text too (the
read tools' ``Memory … failed: …`` line, the write tools' ``memory_write_error`` JSON): the
Responses API's function call output has no error flag, and the text tells the model what went
wrong and what to do. Arguments that are not JSON get the core's ``invalid`` answer, like any
other bad argument. Nothing raises into the run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from agents import FunctionTool, Tool
from agents.strict_schema import ensure_strict_json_schema
from agents.tool_context import ToolContext
from pydantic import ValidationError

from memquill import MemorySession, MemoryToolset, ToolResult
from memquill.jsondoc import parse_json
from memquill.tools import MemoryTool

__all__ = ["Observer", "memory_tools", "observed_tools"]

Observer = Callable[[ToolResult], None]


def memory_tools(session: MemorySession) -> list[Tool]:
    """The session's tools (all six with write access, the three read tools else)."""
    return observed_tools(session, None)


def observed_tools(session: MemorySession, observe: Observer | None) -> list[Tool]:
    """:func:`memory_tools`, handing each call's whole core result to ``observe`` too (the
    function call output carries text only; the harness reads the structured result this way).
    Each tool is a ``FunctionTool``."""
    return [_tool(tool, observe) for tool in MemoryToolset(session).tools]


def _tool(tool: MemoryTool, observe: Observer | None) -> FunctionTool:
    async def invoke(context: ToolContext[Any], arguments: str) -> str:
        result = await _run(tool, arguments)
        if observe is not None:
            observe(result)
        return result.text

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=ensure_strict_json_schema(copy.deepcopy(tool.spec.input_schema())),
        on_invoke_tool=invoke,
        strict_json_schema=True,
    )


async def _run(tool: MemoryTool, arguments: str) -> ToolResult:
    """The core's answer to ``arguments`` (the model's JSON text)."""
    try:
        parsed: Any = parse_json(arguments or "{}")  # depth-bounded, as every parse
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        # Not a JSON object: the argument model's own JSON error, in the core's wording.
        try:
            tool.spec.args.model_validate_json(arguments or "null")
        except ValidationError as error:
            return tool.reject(error)
        parsed = {}
    return await tool.ainvoke(parsed)  # pyright: ignore[reportUnknownArgumentType]
