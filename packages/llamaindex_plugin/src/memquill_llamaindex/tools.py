"""The memquill tools as LlamaIndex ``FunctionTool`` objects, and a ``BaseToolSpec`` for them.

Every field comes from the core's :class:`memquill.ToolSpec`: the name, the description and the
argument model (``fn_schema``). The tool functions hand the model's raw arguments to
:meth:`memquill.MemoryTool.invoke`, which validates them and never raises for bad input, and a
callback turns the core's :class:`memquill.ToolResult` into the ``ToolOutput``: ``content`` is
the core's text, ``raw_output`` its structured result, ``is_error`` its error flag. Nothing here
words, formats or branches per tool.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import TextBlock
from llama_index.core.llms import LLM
from llama_index.core.tools import FunctionTool, ToolMetadata, ToolOutput
from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec

from memquill import MemorySession, MemoryToolset, ToolResult, open_session
from memquill.enhance import TextModel
from memquill.query import MemoryQuery
from memquill.tools import Access, MemoryTool
from memquill_llamaindex.model import LLMTextModel

__all__ = ["MemquillToolSpec", "memquill_tools"]


@dataclass(frozen=True, slots=True)
class _Call:
    """What a tool function returns: the arguments it got and the core's result."""

    tool_name: str
    arguments: Mapping[str, Any]
    result: ToolResult

    def __str__(self) -> str:
        # FunctionTool renders its default output with str(); the callback replaces that
        # output, but the default must never be a Python repr either.
        return self.result.text


def _to_output(call: _Call) -> ToolOutput:
    """The ``ToolOutput`` a model sees: the core's text, structure and error flag, unchanged."""
    return ToolOutput(
        tool_name=call.tool_name,
        blocks=[TextBlock(text=call.result.text)],
        raw_input={"args": (), "kwargs": dict(call.arguments)},
        raw_output=call.result.structured,
        is_error=call.result.is_error,
    )


async def _ato_output(call: _Call) -> ToolOutput:
    # Given explicitly: FunctionTool would otherwise run the sync callback on an executor.
    return _to_output(call)


def _function_tool(tool: MemoryTool, metadata: ToolMetadata | None = None) -> FunctionTool:
    """One core tool as a ``FunctionTool`` (``metadata`` overrides the core's, if given)."""
    spec = tool.spec

    # ``**arguments``: the core's model validates them, so a bad call gets the core's own
    # rejection text instead of a Python TypeError.
    def run(**arguments: Any) -> _Call:
        return _Call(spec.name, arguments, tool.invoke(arguments))

    async def arun(**arguments: Any) -> _Call:
        return _Call(spec.name, arguments, await tool.ainvoke(arguments))

    return FunctionTool.from_defaults(
        fn=run,
        async_fn=arun,
        name=spec.name,
        description=spec.description,
        fn_schema=spec.args,
        tool_metadata=metadata,
        callback=_to_output,
        async_callback=_ato_output,
    )


class MemquillToolSpec(BaseToolSpec):
    """memquill memory as a LlamaIndex tool spec: the session's tools, in catalogue order.

    A session with ``read_write`` access gets all six tools; a ``read`` session gets
    ``memory_search``, ``memory_get`` and ``memory_recent`` only. Writes are authorised again
    by the core at every call (``MemorySession.authorize_write``).

    Args:
        session: who calls, on which workspace, with which access.
        query: a query engine to share with other memquill components (one is created if
            omitted).
    """

    def __init__(self, session: MemorySession, *, query: MemoryQuery | None = None) -> None:
        self.toolset = MemoryToolset(session, query=query)
        """The core toolset the tools call."""
        self.spec_functions: list[SPEC_FUNCTION_TYPE] = list(self.toolset.names)

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        session_id: str | None = None,
        access: Access = "read_write",
        authorize_write: Callable[[], bool] | None = None,
        model: LLM | TextModel | None = None,
        *,
        store: str | None = None,
    ) -> MemquillToolSpec:
        """The tools of a new session (:func:`memquill.open_session`: same arguments, same
        meaning, and every installed plugin's secret detectors guard the writes).

        Args:
            workspace: absolute path of the workspace folder.
            session_id: the host's trusted id of the conversation; writes need one.
            access: ``read`` or ``read_write``.
            authorize_write: asked at every write; return ``False`` to refuse (Plan mode).
            model: an LLM (or any :class:`memquill.enhance.TextModel`) to re-rank ``memory_search``
                candidates with; keyword order without one (``docs/model-assistance.md``).
            store: where the records live: ``file`` or a ``postgresql://`` URL (default
                ``$MEMQUILL_STORE``, else the workspace's ``memory/records.md``).
        """
        text_model = LLMTextModel(model) if isinstance(model, LLM) else model
        session = open_session(
            workspace, session_id, access, authorize_write, model=text_model, store=store
        )
        return cls(session)

    def to_tool_list(
        self,
        spec_functions: list[SPEC_FUNCTION_TYPE] | None = None,
        func_to_metadata_mapping: dict[str, ToolMetadata] | None = None,
    ) -> list[FunctionTool]:
        """The tools as ``FunctionTool`` objects.

        Args:
            spec_functions: tool names to include, in that order (default: every tool the
                session offers).
            func_to_metadata_mapping: tool name → metadata to use instead of the core's
                (a changed name, description or schema is no longer the memquill contract).

        Raises:
            ValueError: a name is not one of the tools this session offers.
        """
        overrides = func_to_metadata_mapping or {}
        tools: list[FunctionTool] = []
        for entry in spec_functions or self.spec_functions:
            # A (sync, async) pair names one tool twice; the first name is the tool.
            name = entry if isinstance(entry, str) else entry[0]
            if name not in self.toolset.names:
                offered = ", ".join(self.toolset.names)
                raise ValueError(f"{name!r} is not a memquill tool of this session ({offered})")
            tools.append(_function_tool(self.toolset[name], overrides.get(name)))
        return tools

    def system_prompt(self) -> str:
        """The core's system-prompt fragments for exactly these tools (write ones if mounted)."""
        return self.toolset.system_prompt()


def memquill_tools(
    session: MemorySession, *, query: MemoryQuery | None = None
) -> list[FunctionTool]:
    """The memory tools of ``session`` as LlamaIndex ``FunctionTool`` objects.

    Each tool's ``ToolOutput.content`` is the core's text, ``raw_output`` the structured result
    and ``is_error`` the core's failure flag, on ``call`` and ``acall`` alike.

    Args:
        session: who calls, on which workspace, with which access (``read`` sessions get the
            three read tools only).
        query: a query engine to share (one is created if omitted).
    """
    return MemquillToolSpec(session, query=query).to_tool_list()
