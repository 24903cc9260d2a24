"""The ``memquill`` entry point of memquill-adk: registers the ``adk`` adapter.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only builds a :class:`memquill.plugins.AdapterSpec`; ``open`` builds ADK's
``FunctionTool``s for one session (no model, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER", "memquill_register_adapters"]


def _open(session: MemorySession) -> AdapterHarness:
    # Imported on use, so listing plugins never imports ADK (a heavy import).
    from memquill_adk.harness import AdkHarness

    return AdkHarness(session)


ADAPTER: Final = AdapterSpec(
    name="adk",
    framework="Google ADK (FunctionTools; a BaseMemoryService on the same workspaces)",
    distribution="memquill-adk",
    open=_open,
)
"""The adapter this plugin registers: memquill's six tools as ADK ``FunctionTool``s."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the ``adk`` adapter."""
    register(ADAPTER)
