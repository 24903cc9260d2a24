"""memquill-langchain's plugin: registers the ``langchain`` adapter with memquill.

Named by the ``memquill`` entry point of this distribution, so ``memquill plugins`` lists the
adapter and the parity suite and ``memquill demo`` can open it. Registering builds one small
object; the tools are created only when a harness is opened for a session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER_NAME", "memquill_register_adapters", "open_harness"]

ADAPTER_NAME: Final = "langchain"
"""The adapter's key in ``memquill plugins`` and the parity suite."""


def open_harness(session: MemorySession) -> AdapterHarness:
    """A harness driving this package's LangChain tools for ``session``."""
    # Imported on use: listing plugins must not import LangChain.
    from memquill_langchain.harness import LangChainHarness

    return LangChainHarness(session)


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Contribute the LangChain adapter."""
    register(AdapterSpec(ADAPTER_NAME, "LangChain", "memquill-langchain", open_harness))
