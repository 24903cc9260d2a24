"""The whole parity suite through LlamaIndex: sync ``call_tool`` and async ``acall_tool``.

Both harnesses build the tools with ``memquill_tools`` and read results back from the
``ToolOutput`` a LlamaIndex agent would get, so every case also covers LlamaIndex's own
argument handling and error wrapping.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from memquill.plugins._adapters import HarnessResult
from memquill.testing import ParitySuite
from memquill.testing._runner import HarnessFactory
from memquill_llamaindex import LlamaIndexHarness


class AsyncLlamaIndexHarness(LlamaIndexHarness):
    """The same tools called the way async agents call them (``acall_tool``)."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        return asyncio.run(self.acall(name, arguments))


class TestLlamaIndexParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return LlamaIndexHarness


class TestLlamaIndexAsyncParity(ParitySuite):
    def harness_factory(self) -> HarnessFactory:
        return AsyncLlamaIndexHarness
