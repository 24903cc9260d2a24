"""The core-direct harness: the core's own tools behind the adapter harness protocol.

It is the reference the parity suite and `memquill demo` compare every adapter with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memquill.plugins import HarnessResult, ToolDescriptor
from memquill.tools import MemorySession, MemoryToolset


class CoreHarness:
    """Calls the core's tool handlers directly, with no framework in between."""

    def __init__(self, session: MemorySession) -> None:
        self._toolset = MemoryToolset(session)

    def catalogue(self) -> list[ToolDescriptor]:
        """The mounted tools as the core defines them."""
        return [
            ToolDescriptor(tool.name, tool.description, tool.spec.input_schema())
            for tool in self._toolset.tools
        ]

    def call(self, name: str, arguments: Mapping[str, Any]) -> HarnessResult:
        """Call a mounted tool; ``LookupError`` when it is not mounted."""
        result = self._toolset.call(name, arguments)
        return HarnessResult(result.text, result.is_error, result.structured)

    def close(self) -> None:
        """Nothing to release."""
