"""Any LlamaIndex ``LLM`` as memquill's :class:`~memquill.enhance.TextModel`.

memquill's optional model assistance (re-ranking search candidates, and later extracting
facts) asks a model one question at a time: a system text and a user text in, text out. This
wraps the ``LLM`` a LlamaIndex user already has (``Settings.llm`` or any other)::

    from llama_index.core import Settings
    from memquill_llamaindex import LLMTextModel, MemquillToolSpec

    spec = MemquillToolSpec.from_workspace("/home/me/notes", model=LLMTextModel(Settings.llm))

The call is ``achat`` with a system and a user ``ChatMessage``; cancellation is asyncio's. The
identity is ``llamaindex:<class>/<model name>``, and every simple setting of the LLM (its
``api_key`` included) is the fingerprint material, so a new key or model is a new configuration
and lifts a credential block recorded for the old one. Provider exceptions are raised unchanged
for memquill to classify.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms import LLM

from memquill.enhance import ModelIdentity, Prompt

__all__ = ["LLMTextModel"]


class LLMTextModel:
    """A LlamaIndex ``LLM`` as a memquill text model.

    It is loop-bound (``loop_bound = True``): memquill calls it on the caller's event loop, where
    the LLM's async client (often the agent's own) belongs, rather than on memquill's call loop.

    Args:
        llm: the LLM (any provider, or ``MockLLM`` in tests).
        pass_max_tokens: pass the output budget as ``max_tokens`` to ``achat`` (OpenAI,
            Anthropic and most LLMs take it); turn off for one that refuses the keyword.
    """

    loop_bound = True
    """Called on the caller's event loop (see the class doc)."""

    def __init__(self, llm: LLM, *, pass_max_tokens: bool = True) -> None:
        self.llm = llm
        self.pass_max_tokens = pass_max_tokens

    @property
    def identity(self) -> ModelIdentity:
        """``llamaindex:<class>/<model name>``; the LLM's settings are the secret material."""
        name = f"{type(self.llm).__name__}/{self.llm.metadata.model_name}"
        return ModelIdentity.from_settings("llamaindex", name, self.llm)

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """Ask the LLM; the answer message's text."""
        options: dict[str, Any] = {"max_tokens": max_tokens} if self.pass_max_tokens else {}
        messages = [
            ChatMessage(role=MessageRole.SYSTEM, content=prompt.system),
            ChatMessage(role=MessageRole.USER, content=prompt.user),
        ]
        response = await self.llm.achat(messages, **options)
        return response.message.content or ""

    def __repr__(self) -> str:
        return f"LLMTextModel({type(self.llm).__name__})"
