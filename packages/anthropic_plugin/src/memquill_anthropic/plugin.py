"""The ``memquill`` entry point of memquill-anthropic: registers the ``anthropic`` adapter.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only builds a :class:`memquill.plugins.AdapterSpec`; ``open`` builds the SDK's function
tools for one session (no client, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER", "memquill_register_adapters"]


def _open(session: MemorySession) -> AdapterHarness:
    # Imported on use, so listing plugins never imports the SDK.
    from memquill_anthropic.harness import AnthropicHarness

    return AnthropicHarness(session)


ADAPTER: Final = AdapterSpec(
    name="anthropic",
    framework="Anthropic SDK (function tools; Claude's memory tool on the same store)",
    distribution="memquill-anthropic",
    open=_open,
)
"""The adapter this plugin registers: memquill's six tools as the SDK's function tools."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the ``anthropic`` adapter."""
    register(ADAPTER)
