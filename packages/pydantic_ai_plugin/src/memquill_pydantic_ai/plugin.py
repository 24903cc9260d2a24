"""The ``memquill`` entry point of memquill-pydantic-ai: registers the ``pydantic-ai`` adapter.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only builds a :class:`memquill.plugins.AdapterSpec`; ``open`` builds the toolset
and a scripted agent for one session (no model provider, no network).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER", "memquill_register_adapters"]


def _open(session: MemorySession) -> AdapterHarness:
    # Imported on use, so listing plugins never imports Pydantic AI.
    from memquill_pydantic_ai.harness import PydanticAIHarness

    return PydanticAIHarness(session)


ADAPTER: Final = AdapterSpec(
    name="pydantic-ai",
    framework="Pydantic AI (an AbstractToolset)",
    distribution="memquill-pydantic-ai",
    open=_open,
)
"""The adapter this plugin registers: memquill's six tools as a Pydantic AI toolset."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the ``pydantic-ai`` adapter."""
    register(ADAPTER)
