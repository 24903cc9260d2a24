"""``MemquillToolset``: memquill's six tools as a Pydantic AI toolset.

``Agent(model, toolsets=[MemquillToolset.from_workspace(...)])`` gives the agent
``memory_search``, ``memory_get`` and ``memory_recent`` (and, with write access,
``memory_remember``, ``memory_update`` and ``memory_forget``) with the core's names,
descriptions and JSON schemas, and the core's answers as the tool results.

How a call fails, as Pydantic AI expects a tool to fail:

- arguments the model can fix (the core's ``invalid`` code: a schema violation, an unknown
  key, blank or oversized text) raise ``ModelRetry`` with the core's text, so the model is told
  to correct its call and the tool's retry budget (``max_retries``) bounds the attempts;
- every other failure (a secret refused, a stale revision, an unknown id, a path outside the
  workspace, storage trouble) raises ``ToolFailed`` with the core's text: a failed tool result
  the model sees and adapts to, which does not spend the retry budget.

The toolset's instructions are the core's usage prompt for the mounted tools; with
``recall=True`` they also carry what memquill remembers for the run's prompt (the recent memory
and the search hits, the text the LangChain middleware puts in the system message).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, Self

from pydantic import ValidationError
from pydantic_ai import ModelRetry, RunContext, ToolDefinition
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from memquill import MemorySession, MemoryToolset, ToolResult, open_session
from memquill.tools import Access, MemoryTool, memory_context

__all__ = ["MemquillToolset", "Observer"]

Observer = Callable[[ToolResult], None]

_RETRY_CODE: Final = "invalid"
"""The core's code for arguments the model wrote wrong: the one failure a retry can fix."""

# The core validates (its messages are the parity surface); Pydantic AI's own validation only
# checks that the model sent a JSON object.
_ANY_OBJECT: Final = SchemaValidator(core_schema.dict_schema(core_schema.str_schema()))


class MemquillToolset(AbstractToolset[Any]):
    """memquill's tools for one session, as a Pydantic AI ``AbstractToolset``.

    Args:
        session: who calls, on which workspace, with which access (read tools only for
            ``read``).
        id: the toolset's id among the agent's toolsets (durable execution needs one).
        max_retries: how many corrected calls a tool accepts after a ``ModelRetry``.
        recall: also put the recent memory and the search hits for the run's prompt in the
            instructions.
        observe: handed each call's whole core result (the structured result beside the text).
    """

    def __init__(
        self,
        session: MemorySession,
        *,
        id: str | None = "memquill",  # Pydantic AI's own name for it
        max_retries: int = 1,
        recall: bool = False,
        observe: Observer | None = None,
    ) -> None:
        self.session = session
        self.tools = MemoryToolset(session)
        self._id = id
        self._max_retries = max_retries
        self._recall = recall
        self._observe = observe
        self._by_name: dict[str, MemoryTool] = {tool.name: tool for tool in self.tools.tools}

    @classmethod
    def from_workspace(
        cls,
        workspace: str | os.PathLike[str],
        session_id: str | None = None,
        access: Access = "read_write",
        authorize_write: Callable[[], bool] | None = None,
        *,
        store: str | None = None,
        recall: bool = False,
    ) -> Self:
        """The toolset and its session in one call (:func:`memquill.open_session`, so every
        installed plugin's secret detectors guard the writes).

        Args:
            workspace: the workspace folder.
            session_id: the host's trusted conversation id; writes need one.
            access: ``read`` (the three read tools) or ``read_write``.
            authorize_write: asked at every write; return ``False`` to refuse (Plan mode).
            store: ``file`` or a ``postgresql://`` URL (default ``$MEMQUILL_STORE``, else the
                workspace's ``memory/records.md``).
            recall: as for the constructor.

        Raises:
            ValueError: ``access`` is neither ``read`` nor ``read_write``.
        """
        session = open_session(workspace, session_id, access, authorize_write, store=store)
        return cls(session, recall=recall)

    @property
    def id(self) -> str | None:
        """The toolset's id (``memquill`` unless given)."""
        return self._id

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        """The core's usage prompt for the mounted tools, and with ``recall`` the memory for
        the run's prompt."""
        text = self.tools.system_prompt()
        if self._recall:
            question = ctx.prompt if isinstance(ctx.prompt, str) else ""
            found = memory_context(self.tools, question)
            text += "\n\n<memquill-memory>\n" + "\n\n".join(found) + "\n</memquill-memory>"
        return text

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The session's tools with the core's names, descriptions and input schemas."""
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=tool.name,
                    description=tool.description,
                    parameters_json_schema=tool.spec.input_schema(),
                ),
                max_retries=self._max_retries,
                args_validator=_ANY_OBJECT,
            )
            for tool in self.tools.tools
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        """Run the core's tool; its text on success, ``ModelRetry`` or ``ToolFailed`` else.

        Raises:
            ModelRetry: the arguments break the tool's schema or rules (the core's text).
            ToolFailed: any other failure (the core's text).
        """
        memory_tool = self._by_name[name]
        try:
            arguments = memory_tool.spec.args.model_validate(tool_args)
        except ValidationError as error:
            result = memory_tool.reject(error)
        else:
            result = await memory_tool.ainvoke(arguments)
        if self._observe is not None:
            self._observe(result)
        if not result.is_error:
            return result.text
        if _error_code(result) == _RETRY_CODE:
            raise ModelRetry(result.text)
        raise ToolFailed(result.text)


def _error_code(result: ToolResult) -> str | None:
    """The core's error code: ``code`` in a write error, ``error_code`` in a read result."""
    structured = result.structured or {}
    code = structured.get("code", structured.get("error_code"))
    return code if isinstance(code, str) else None
