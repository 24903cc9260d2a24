"""A scripted LangChain chat model: memquill's model scripts, played by LangChain's fake model.

The parity suite declares a model's replies once (:data:`memquill.testing.ModelScript`); the
LangChain harness plays them through :class:`ScriptedChatModel`, a ``GenericFakeChatModel`` whose
text replies come out of LangChain's own fake-model machinery (callbacks, message conversion,
``ainvoke``), and whose failures and hangs happen inside the model call, where a provider's
would. Tests use it to drive memquill's model assistance through LangChain end to end.
:class:`TrigramEmbeddings` does the same for a parity case's deterministic embedder: a
LangChain ``Embeddings`` answering its vectors (or raising its failure).
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from memquill.testing import ModelScript, TrigramEmbedder, play, trigram_vectors

__all__ = ["ScriptedChatModel", "TrigramEmbeddings"]


class TrigramEmbeddings(Embeddings):
    """memquill's deterministic trigram embedder as a LangChain ``Embeddings``.

    Args:
        embedder: the embedder whose vectors (or failure) it answers.
    """

    def __init__(self, embedder: TrigramEmbedder) -> None:
        self.model = embedder.identity.name
        self._embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The documents' vectors."""
        return trigram_vectors(self._embedder, texts)

    def embed_query(self, text: str) -> list[float]:
        """The query's vector."""
        return trigram_vectors(self._embedder, [text])[0]


class ScriptedChatModel(GenericFakeChatModel):
    """Plays one :data:`~memquill.testing.ModelScript` reply per call.

    Attributes:
        script: the replies, in call order.
    """

    script: tuple[Any, ...] = ()
    # Private: a counter is not configuration (the model's identity must not change per call).
    _calls: int = PrivateAttr(default=0)

    @property
    def calls(self) -> int:
        """How many calls were made."""
        return self._calls

    @classmethod
    def from_script(cls, script: ModelScript) -> ScriptedChatModel:
        """The fake model for ``script`` (its text replies feed LangChain's fake messages)."""
        texts = iter([AIMessage(reply.text or "") for reply in script if reply.text is not None])
        return cls(messages=texts, script=tuple(script))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = self._calls
        self._calls += 1
        if index >= len(self.script):
            raise LookupError(f"the model script has no reply for call {index + 1}")
        reply = self.script[index]
        if reply.text is None:
            await play(reply)  # raises the scripted failure, or hangs until cancelled
        return await super()._agenerate(messages, stop, run_manager, **kwargs)
