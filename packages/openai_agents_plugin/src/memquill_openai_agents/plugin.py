"""The ``memquill`` entry point of memquill-openai-agents: registers the ``openai-agents`` adapter.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only builds a :class:`memquill.plugins.AdapterSpec`; ``open`` builds the SDK's
function tools for one session (no client, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER", "memquill_register_adapters"]


def _open(session: MemorySession) -> AdapterHarness:
    # Imported on use, so listing plugins never imports the SDK.
    from memquill_openai_agents.harness import OpenAIAgentsHarness

    return OpenAIAgentsHarness(session)


ADAPTER: Final = AdapterSpec(
    name="openai-agents",
    framework="OpenAI Agents SDK (function tools)",
    distribution="memquill-openai-agents",
    open=_open,
)
"""The adapter this plugin registers: memquill's six tools as the SDK's function tools."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the ``openai-agents`` adapter."""
    register(ADAPTER)
