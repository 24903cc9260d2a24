"""The ``memquill`` entry point of memquill-mcp: registers the two MCP adapters.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only builds :class:`memquill.plugins.AdapterSpec` objects; ``open`` starts the client
(and, for ``mcp-stdio``, the ``memquill-mcp`` subprocess) for one session, offline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTERS", "memquill_register_adapters"]


def _open_in_process(session: MemorySession) -> AdapterHarness:
    # Imported on use, so listing plugins never starts an MCP client.
    from memquill_mcp.harness import McpClientHarness

    return McpClientHarness(session)


def _open_stdio(session: MemorySession) -> AdapterHarness:
    from memquill_mcp.harness import McpStdioHarness

    return McpStdioHarness(session)


ADAPTERS: Final = (
    AdapterSpec(
        name="mcp",
        framework="MCP (in-process client, JSON-RPC)",
        distribution="memquill-mcp",
        open=_open_in_process,
    ),
    AdapterSpec(
        name="mcp-stdio",
        framework="MCP (memquill-mcp subprocess over stdio)",
        distribution="memquill-mcp",
        open=_open_stdio,
    ),
)
"""The adapters this plugin registers: the MCP server in-process, and as a real subprocess."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the ``mcp`` and ``mcp-stdio`` adapters."""
    for adapter in ADAPTERS:
        register(adapter)
