"""Scripted extraction models through each framework's own fake: LangChain's
``GenericFakeChatModel`` and LlamaIndex's ``MockLLM``, wrapped by the adapters' TextModels.

A reply is the answer's text, or ``"raise:<kind>"`` for a scripted provider failure
(``http_401``, ``http_429``, ...); the last reply repeats. Each fake has an ``api_key`` setting,
so changing it is a new model configuration (what lifts a credential block), and counts its
calls in a list (lists are not identity material, so counting never changes the identity).
An ``on_call`` hook runs inside the call, before the answer (to edit a message meanwhile).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.llms import MockLLM
from pydantic import Field, PrivateAttr, SecretStr

from memquill.enhance import TextModel
from memquill.testing._models import scripted_failure
from memquill_langchain import ChatModelTextModel
from memquill_llamaindex import LLMTextModel

Hook = Callable[[int], object]
"""Runs inside the call before the answer; an awaitable it returns is awaited."""


def _reply(replies: Sequence[str], index: int) -> str:
    reply = replies[min(index, len(replies) - 1)]
    if reply.startswith("raise:"):
        raise scripted_failure(reply.removeprefix("raise:"))
    return reply


async def _run(result: object) -> None:
    if inspect.isawaitable(result):
        await result


class ScriptedExtractorChat(GenericFakeChatModel):
    """A LangChain fake chat model answering from a script."""

    model_name: str = "fake-extractor"
    api_key: SecretStr = SecretStr("sk-lc-one")
    replies: list[str] = Field(default_factory=list)
    calls: list[int] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)
    on_call: Any = None

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        index = len(self.calls)
        self.calls.append(index)
        self.prompts.append(messages[-1].text)
        if self.on_call is not None:
            await _run(self.on_call(index))
        text = _reply(self.replies, index)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


class ScriptedExtractorLLM(MockLLM):
    """A LlamaIndex mock LLM answering from a script."""

    api_key: str = "sk-li-one"
    replies: list[str] = Field(default_factory=list)
    calls: list[int] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)
    _on_call: Hook | None = PrivateAttr(default=None)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        index = len(self.calls)
        self.calls.append(index)
        self.prompts.append(messages[-1].content or "")
        if self._on_call is not None:
            await _run(self._on_call(index))
        text = _reply(self.replies, index)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text))


class FrameworkExtractor:
    """One framework's scripted extractor, as a TextModel, with its call count and key."""

    def __init__(self, kind: str, replies: Sequence[str], on_call: Hook | None = None) -> None:
        self.kind = kind
        if kind == "langchain":
            self.chat = ScriptedExtractorChat(messages=iter([]), replies=list(replies))
            self.chat.on_call = on_call
            self.model: TextModel = ChatModelTextModel(self.chat)
        else:
            self.llm = ScriptedExtractorLLM(max_tokens=None)
            self.llm.replies = list(replies)
            self.llm._on_call = on_call  # pyright: ignore[reportPrivateUsage]
            self.model = LLMTextModel(self.llm)

    @property
    def calls(self) -> int:
        fake = self.chat if self.kind == "langchain" else self.llm
        return len(fake.calls)

    def change_key(self, key: str) -> None:
        if self.kind == "langchain":
            self.chat.api_key = SecretStr(key)
        else:
            self.llm.api_key = key


FRAMEWORKS = ("langchain", "llamaindex")
