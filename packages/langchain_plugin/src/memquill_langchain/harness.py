"""The LangChain adapter harness: memquill's tools driven through LangChain's own calls.

The parity suite (:mod:`memquill.testing`) and ``memquill demo`` open it through the
``langchain`` adapter this package registers. Every call is a model-style ``ToolCall`` passed to
``BaseTool.invoke``, so what comes back is exactly the ``ToolMessage`` an agent would receive.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import count
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import BaseTool
from pydantic import BaseModel

from memquill import MemorySession
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill.testing import with_framework_embedder, with_framework_model
from memquill_langchain.embeddings import EmbeddingsEmbedder
from memquill_langchain.model import ChatModelTextModel
from memquill_langchain.scripted import ScriptedChatModel, TrigramEmbeddings
from memquill_langchain.toolkit import MemquillToolkit

__all__ = ["LangChainHarness"]


class LangChainHarness:
    """Drives a :class:`~memquill_langchain.MemquillToolkit` for one session.

    Args:
        session: the session to build the toolkit for.
    """

    def __init__(self, session: MemorySession) -> None:
        # A parity case's scripted model answers through LangChain's own fake chat model.
        session = with_framework_model(
            session, lambda script: ChatModelTextModel(ScriptedChatModel.from_script(script))
        )
        # A parity embedder answers through LangChain ``Embeddings`` and the adapter's embedder.
        session = with_framework_embedder(
            session,
            lambda embedder: EmbeddingsEmbedder(TrigramEmbeddings(embedder), dims=embedder.dims),
        )
        self._tools = {tool.name: tool for tool in MemquillToolkit(session=session).get_tools()}
        self._ids = count(1)

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as LangChain presents them to a model (``tool_call_schema``)."""
        return [
            ToolDescriptor(tool.name, tool.description, _call_schema(tool))
            for tool in self._tools.values()
        ]

    def tool(self, name: str) -> BaseTool:
        """The LangChain tool called ``name``.

        Raises:
            LookupError: the toolkit does not offer that tool (for example a write tool for a
                read-only session).
        """
        try:
            return self._tools[name]
        except KeyError:
            raise LookupError(f"the LangChain toolkit offers no tool named {name!r}") from None

    def tool_call(self, name: str, arguments: Mapping[str, Any]) -> ToolCall:
        """A model-style tool call with a fresh id."""
        return ToolCall(
            name=name, args=dict(arguments), id=f"call-{next(self._ids)}", type="tool_call"
        )

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Invoke the tool with a ``ToolCall`` and read back the ``ToolMessage``.

        Raises:
            LookupError: the tool is not offered.
        """
        tool = self.tool(name)
        return self.result_of(tool.invoke(self.tool_call(name, arguments)))

    @staticmethod
    def result_of(message: object) -> HarnessResult:
        """Text, error flag and artifact of a ``ToolMessage``.

        Raises:
            TypeError: ``message`` is not a ``ToolMessage`` with text content.
        """
        if not isinstance(message, ToolMessage) or not isinstance(message.content, str):
            raise TypeError(f"expected a ToolMessage with text content, got {message!r}")
        artifact: Mapping[str, Any] | None = message.artifact
        return HarnessResult(message.content, message.status == "error", artifact)

    def close(self) -> None:
        """Nothing to release: the tools hold no processes or event loops."""


def _call_schema(tool: BaseTool) -> dict[str, Any]:
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return dict(schema)
    if issubclass(schema, BaseModel):
        return schema.model_json_schema()
    # Core argument models are pydantic v2; a v1 schema here means the tool is not ours.
    raise TypeError(f"{tool.name}: unsupported pydantic v1 tool-call schema")
