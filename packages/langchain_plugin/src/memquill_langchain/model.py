"""Any LangChain chat model as memquill's :class:`~memquill.enhance.TextModel`.

memquill's optional model assistance (re-ranking search candidates, and later extracting
facts) asks a model one question at a time: a system text and a user text in, text out. This
wraps the ``BaseChatModel`` a LangChain user already has::

    from langchain_openai import ChatOpenAI
    from memquill_langchain import ChatModelTextModel, MemquillToolkit

    model = ChatModelTextModel(ChatOpenAI(model="gpt-4o-mini"))
    toolkit = MemquillToolkit.from_workspace("/home/me/notes", session_id="chat-42", model=model)

The call is ``ainvoke`` with a ``SystemMessage`` and a ``HumanMessage``; cancellation is
asyncio's. The identity is ``langchain:<class>/<model name>``, and every simple setting of the
model (its ``SecretStr`` keys with their real value) is the fingerprint material, so a new key
or model name is a new configuration: a credential block recorded for the old one no longer
applies. Provider exceptions are raised unchanged for memquill to classify.
"""

from __future__ import annotations

from typing import Any, Final

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from memquill.enhance import ModelIdentity, Prompt

__all__ = ["ChatModelTextModel"]

_NAME_FIELDS: Final = ("model_name", "model", "model_id", "deployment_name")


class ChatModelTextModel:
    """A LangChain ``BaseChatModel`` as a memquill text model.

    It is loop-bound (``loop_bound = True``): memquill calls it on the caller's event loop, where
    the chat model's async client (often the agent's own) belongs, rather than on memquill's
    call loop. LangChain runs a model without native async support in an executor, so it does
    not block that loop.

    Args:
        model: the chat model (any provider, or a fake one in tests).
        max_tokens_param: the keyword the model takes its output budget under (``max_tokens``
            for OpenAI, Anthropic, Mistral and most others); ``None`` to pass no budget.
    """

    loop_bound = True
    """Called on the caller's event loop (see the class doc)."""

    def __init__(
        self, model: BaseChatModel, *, max_tokens_param: str | None = "max_tokens"
    ) -> None:
        self.model = model
        self.max_tokens_param = max_tokens_param

    @property
    def identity(self) -> ModelIdentity:
        """``langchain:<class>/<model name>``; the model's settings are the secret material."""
        model = self.model
        name = type(model).__name__
        for field in _NAME_FIELDS:
            value = getattr(model, field, None)
            if isinstance(value, str) and value:
                name = f"{name}/{value}"
                break
        return ModelIdentity.from_settings("langchain", name, model)

    async def generate(self, prompt: Prompt, *, max_tokens: int) -> str:
        """Ask the chat model; its answer's text (text blocks joined)."""
        options: dict[str, Any] = {}
        if self.max_tokens_param:
            options[self.max_tokens_param] = max_tokens
        messages = [SystemMessage(prompt.system), HumanMessage(prompt.user)]
        answer = await self.model.ainvoke(messages, **options)
        return answer.text

    def __repr__(self) -> str:
        return f"ChatModelTextModel({type(self.model).__name__})"
