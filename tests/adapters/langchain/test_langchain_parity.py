"""The whole parity suite through LangChain's own tool calls, sync and async."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from memquill.plugins._adapters import HarnessResult
from memquill.testing import ParitySuite
from memquill.testing._runner import HarnessFactory
from memquill_langchain import LangChainHarness


class AsyncLangChainHarness(LangChainHarness):
    """The same harness, calling each tool through ``BaseTool.ainvoke`` (the native async path)."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        tool = self.tool(name)
        # Parity steps are synchronous; each async call gets its own short-lived event loop.
        message = asyncio.run(tool.ainvoke(self.tool_call(name, arguments)))
        return self.result_of(message)


class TestLangChainParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return LangChainHarness


class TestLangChainAsyncParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return AsyncLangChainHarness
