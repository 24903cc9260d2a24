"""The ``memquill`` entry point of memquill-llamaindex: registers the LlamaIndex adapter.

memquill loads this module when a host builds a plugin manager (never at ``import memquill``).
Registering only hands over an :class:`memquill.plugins.AdapterSpec`; ``open`` builds the memory
``FunctionTool`` objects for one session, offline and without reading the workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.enhance import TextModel
from memquill.plugins import AdapterHarness, AdapterSpec, hookimpl

__all__ = ["ADAPTER", "memquill_register_adapters", "memquill_register_text_models", "text_model"]


def _open(session: MemorySession) -> AdapterHarness:
    # Imported on use: listing plugins must not import LlamaIndex.
    from memquill_llamaindex.harness import LlamaIndexHarness

    return LlamaIndexHarness(session)


ADAPTER: Final = AdapterSpec(
    name="llamaindex",
    framework="LlamaIndex",
    distribution="memquill-llamaindex",
    open=_open,
)
"""The adapter this plugin registers: the memory tools, driven by LlamaIndex's ``call_tool``."""


@hookimpl
def memquill_register_adapters(register: Callable[[AdapterSpec], None]) -> None:
    """Register the LlamaIndex adapter."""
    register(ADAPTER)


def text_model(model: object) -> TextModel | None:
    """A LlamaIndex ``LLM`` as a memquill text model (``None`` for anything else)."""
    # Imported on use: listing plugins must not import LlamaIndex.
    from llama_index.core.llms import LLM

    from memquill_llamaindex.model import LLMTextModel

    return LLMTextModel(model) if isinstance(model, LLM) else None


@hookimpl
def memquill_register_text_models(
    register: Callable[[Callable[[object], TextModel | None]], None],
) -> None:
    """Let hosts name a LlamaIndex LLM where memquill takes a model (``memquill extract``)."""
    register(text_model)
