"""memquill-langchain's plugin: registers the ``langchain`` adapter with memquill.

Named by the ``memquill`` entry point of this distribution, so ``memquill plugins`` lists the
adapter and the LangGraph store, and the parity suite and ``memquill demo`` can open the
adapter. Registering builds small objects; the tools are created only when a harness is opened
for a session, and nothing of LangGraph is imported to list the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from memquill import MemorySession
from memquill.enhance import TextModel
from memquill.plugins import AdapterHarness, AdapterSpec, IntegrationSpec, hookimpl

__all__ = [
    "ADAPTER_NAME",
    "STORE",
    "memquill_register_adapters",
    "memquill_register_integrations",
    "memquill_register_text_models",
    "open_harness",
    "text_model",
]

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


STORE: Final = IntegrationSpec(
    "langgraph-store",
    "LangGraph BaseStore",
    "memquill-langchain[langgraph]",
    "memquill_langchain.store:MemquillStore",
    requires=("langgraph",),
)
"""``MemquillStore``, listed by ``memquill plugins`` (available once ``langgraph`` is)."""


@hookimpl
def memquill_register_integrations(register: Callable[[IntegrationSpec], None]) -> None:
    """Contribute the LangGraph store (listing it imports nothing of LangGraph)."""
    register(STORE)


def text_model(model: object) -> TextModel | None:
    """A LangChain chat model as a memquill text model (``None`` for anything else)."""
    # Imported on use: listing plugins must not import LangChain.
    from langchain_core.language_models import BaseChatModel

    from memquill_langchain.model import ChatModelTextModel

    return ChatModelTextModel(model) if isinstance(model, BaseChatModel) else None


@hookimpl
def memquill_register_text_models(
    register: Callable[[Callable[[object], TextModel | None]], None],
) -> None:
    """Let hosts name a LangChain chat model where memquill takes a model (``memquill extract``)."""
    register(text_model)
