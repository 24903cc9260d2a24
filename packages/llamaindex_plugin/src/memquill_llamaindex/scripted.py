"""A scripted LlamaIndex LLM: memquill's model scripts, played by LlamaIndex's mock LLM (and
the parity cases' deterministic embedder as a LlamaIndex embedding model).

The parity suite declares a model's replies once (:data:`memquill.testing.ModelScript`); the
LlamaIndex harness plays them through :class:`ScriptedLLM`, a ``MockFunctionCallingLLM`` whose
text replies come from its ``response_generator`` (LlamaIndex's own mock machinery and callback
decorators), and whose failures and hangs happen inside ``achat``, where a provider's would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from pydantic import PrivateAttr

from memquill.testing import ModelScript, TrigramEmbedder, play, trigram_vectors

__all__ = ["ScriptedLLM", "TrigramEmbedding"]


class TrigramEmbedding(BaseEmbedding):
    """memquill's deterministic trigram embedder as a LlamaIndex ``BaseEmbedding`` (its
    vectors, or its failure raised), for parity cases with an embedder."""

    _embedder: TrigramEmbedder = PrivateAttr()

    @classmethod
    def of(cls, embedder: TrigramEmbedder) -> TrigramEmbedding:
        """Answer with ``embedder``'s vectors."""
        model = cls(model_name=embedder.identity.name)
        model._embedder = embedder
        return model

    def _get_query_embedding(self, query: str) -> list[float]:
        return trigram_vectors(self._embedder, [query])[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return trigram_vectors(self._embedder, [text])[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return trigram_vectors(self._embedder, texts)


class ScriptedLLM(MockFunctionCallingLLM):
    """Plays one :data:`~memquill.testing.ModelScript` reply per call."""

    _script: ModelScript = PrivateAttr(default=())
    _calls: int = PrivateAttr(default=0)

    @classmethod
    def from_script(cls, script: ModelScript) -> ScriptedLLM:
        """The mock LLM for ``script``."""
        llm = cls(is_chat_model=True)
        llm._script = tuple(script)
        llm.response_generator = llm._respond
        return llm

    @property
    def calls(self) -> int:
        """How many calls were made."""
        return self._calls

    def _respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        reply = self._script[self._calls - 1]
        return ChatMessage(role=MessageRole.ASSISTANT, content=reply.text or "")

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        """Raise or hang as scripted, else answer through the mock's own ``achat``."""
        index = self._calls
        self._calls += 1
        if index >= len(self._script):
            raise LookupError(f"the model script has no reply for call {index + 1}")
        reply = self._script[index]
        if reply.text is None:
            await play(reply)
        return await super().achat(messages, **kwargs)
