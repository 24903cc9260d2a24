"""The whole parity suite over MCP, twice: in-process JSON-RPC, and a real stdio subprocess."""

from __future__ import annotations

from memquill.testing import HarnessFactory, ParitySuite
from memquill_mcp import McpClientHarness, McpStdioHarness


class TestMcpInProcessParity(ParitySuite):
    """``Client(server, mode="legacy")``: every call is a JSON-RPC message through the SDK."""

    def harness_factory(self) -> HarnessFactory:
        return McpClientHarness


class TestMcpStdioParity(ParitySuite):
    """A ``memquill-mcp`` subprocess per case, reproducing the session from its command line."""

    def harness_factory(self) -> HarnessFactory:
        return McpStdioHarness
