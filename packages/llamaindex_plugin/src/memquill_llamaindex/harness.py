"""The LlamaIndex adapter harness: memquill's tools driven the way a LlamaIndex agent drives them.

``memquill demo`` and the parity suite (``memquill.testing``) open it through the adapter
registered in :mod:`memquill_llamaindex.plugin`. The catalogue is what LlamaIndex sends to a
model (``ToolMetadata.get_parameters_dict()``), and each call goes through LlamaIndex's own
agent-side ``call_tool``, so the comparison covers the framework's argument handling and error
wrapping as well as the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from llama_index.core.tools import FunctionTool, ToolOutput

# llama-index types the ``arguments`` of both as a bare ``dict``; we pass a dict[str, Any].
from llama_index.core.tools.calling import acall_tool, call_tool  # pyright: ignore[reportUnknownVariableType]

from memquill import MemorySession
from memquill.plugins import HarnessResult, ToolDescriptor
from memquill.testing import with_framework_embedder, with_framework_model
from memquill_llamaindex.embedding import BaseEmbeddingEmbedder
from memquill_llamaindex.model import LLMTextModel
from memquill_llamaindex.scripted import ScriptedLLM, TrigramEmbedding
from memquill_llamaindex.tools import memquill_tools

__all__ = ["LlamaIndexHarness"]


class LlamaIndexHarness:
    """Drives one session's memquill tools as LlamaIndex does (a
    :class:`memquill.plugins.AdapterHarness`).

    Args:
        session: the session whose tools to build.
    """

    def __init__(self, session: MemorySession) -> None:
        # A parity case's scripted model answers through LlamaIndex's own mock LLM.
        session = with_framework_model(
            session, lambda script: LLMTextModel(ScriptedLLM.from_script(script))
        )
        # A parity embedder answers through a LlamaIndex embedding model and the adapter's embedder.
        session = with_framework_embedder(
            session,
            lambda embedder: BaseEmbeddingEmbedder(
                TrigramEmbedding.of(embedder), dims=embedder.dims
            ),
        )
        self.tools: tuple[FunctionTool, ...] = tuple(memquill_tools(session))
        """The tools, in the order a model is offered them."""

    def catalogue(self) -> list[ToolDescriptor]:
        """The tools as LlamaIndex presents them to a model."""
        return [
            ToolDescriptor(tool.metadata.get_name(), tool.metadata.description, _parameters(tool))
            for tool in self.tools
        ]

    def tool(self, name: str) -> FunctionTool:
        """The offered tool called ``name``.

        Raises:
            LookupError: the session is not offered that tool.
        """
        for tool in self.tools:
            if tool.metadata.name == name:
                return tool
        raise LookupError(name)

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a tool through LlamaIndex's ``call_tool``, as an agent would.

        Raises:
            LookupError: the session is not offered that tool.
        """
        return _result(call_tool(self.tool(name), dict(arguments)))

    async def acall(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a tool through LlamaIndex's ``acall_tool``, as an async agent would.

        Raises:
            LookupError: the session is not offered that tool.
        """
        return _result(await acall_tool(self.tool(name), dict(arguments)))

    def close(self) -> None:
        """Nothing to release: the tools hold no processes or loops."""


def _parameters(tool: FunctionTool) -> dict[str, Any]:
    # The JSON schema LlamaIndex sends to a model; typed as a bare dict upstream.
    return tool.metadata.get_parameters_dict()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _result(output: ToolOutput) -> HarnessResult:
    # A framework-made error output (an exception caught by call_tool) carries the exception
    # text in raw_output: that is not structure, and the text comparison will flag it anyway.
    raw: object = output.raw_output
    structured = cast(Mapping[str, Any], raw) if isinstance(raw, Mapping) else None
    return HarnessResult(output.content, output.is_error, structured)
