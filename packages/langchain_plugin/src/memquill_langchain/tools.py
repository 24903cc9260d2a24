"""One memquill memory tool as a native LangChain tool.

:class:`MemquillTool` is a :class:`~langchain_core.tools.BaseTool` whose name, description and
``args_schema`` are the core's :class:`~memquill.ToolSpec` fields, unchanged. It adds no wording
of its own. Every outcome comes from the core's :class:`~memquill.ToolResult`:

- success: a ``ToolMessage`` whose ``content`` is the core's text and whose ``artifact`` is the
  structured result (``response_format="content_and_artifact"``);
- failure (``is_error``): the same text in a ``ToolMessage`` with ``status="error"``, through
  LangChain's own ``ToolException`` channel (``handle_tool_error``);
- arguments LangChain's parsing rejects first: the core's own rejection text for that
  ``ValidationError`` (``handle_validation_error``), also with ``status="error"``.

LangChain keeps no artifact on its error path, so a failed call carries ``artifact=None``; for
write tools the content is the ``memory_write_error`` JSON itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.tools import BaseTool, ToolException
from pydantic import Field, ValidationError

from memquill import MemquillError, ToolResult
from memquill.tools import MemoryTool

__all__ = ["MemoryToolError", "MemquillTool"]


class MemoryToolError(ToolException, MemquillError):
    """A memory tool call that the core answered with a failure (``ToolResult.is_error``).

    Raised inside the tool and turned by LangChain into ``ToolMessage(status="error")`` with
    ``str(error)`` as content, which is the core's text verbatim. With
    ``handle_tool_error=False`` it reaches the caller instead; being a ``MemquillError`` too,
    ``except MemquillError`` catches it like any other memquill failure.

    Attributes:
        result: the core's full result; ``result.structured`` holds the failure as data (for
            write tools, the ``memory_write_error`` with its ``code``).
    """

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.text)
        self.result = result

    def __reduce__(self) -> tuple[type[MemoryToolError], tuple[ToolResult]]:
        return (type(self), (self.result,))


class MemquillTool(BaseTool):
    """A memquill memory tool, registered natively in LangChain.

    Build it with :meth:`from_memory_tool` (or get all of them from
    :class:`~memquill_langchain.MemquillToolkit`): the name, description, argument schema and
    error handling then come from the core tool.

    Attributes:
        memory_tool: the core tool, bound to a :class:`~memquill.MemorySession`.
    """

    memory_tool: MemoryTool = Field(exclude=True)

    @classmethod
    def from_memory_tool(cls, tool: MemoryTool) -> MemquillTool:
        """Wrap a core tool, taking every model-visible field from its spec.

        Args:
            tool: a tool of a :class:`~memquill.MemoryToolset`.

        Returns:
            The LangChain tool: sync and async, content and artifact, core error texts.
        """
        spec = tool.spec
        return cls(
            name=spec.name,
            description=spec.description,
            args_schema=spec.args,
            memory_tool=tool,
            response_format="content_and_artifact",
            handle_tool_error=True,
            handle_validation_error=partial(_rejection_text, tool),
        )

    def _run(
        self,
        *args: Any,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> tuple[str, dict[str, Any] | None]:
        """Call the core tool on LangChain's validated arguments."""
        return _content_and_artifact(self.memory_tool.invoke(self._arguments(args, kwargs)))

    async def _arun(
        self,
        *args: Any,
        run_manager: AsyncCallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> tuple[str, dict[str, Any] | None]:
        """Call the core tool natively async (its file I/O runs off the event loop)."""
        result = await self.memory_tool.ainvoke(self._arguments(args, kwargs))
        return _content_and_artifact(result)

    def _arguments(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        # LangChain passes a bare string input (``tool.invoke("tea")``) positionally, after
        # validating it as the schema's first field; give it that field's name back.
        fields = self.memory_tool.spec.args.model_fields
        return {**dict(zip(fields, args, strict=False)), **kwargs}


def _content_and_artifact(result: ToolResult) -> tuple[str, dict[str, Any] | None]:
    if result.is_error:
        raise MemoryToolError(result)
    return result.text, result.structured


def _rejection_text(tool: MemoryTool, error: Exception) -> str:
    """The core's text for arguments LangChain's own parsing refused."""
    if not isinstance(error, ValidationError):
        # Only pydantic v1 models raise anything else, and core schemas are pydantic v2.
        raise error
    return tool.reject(error).text
