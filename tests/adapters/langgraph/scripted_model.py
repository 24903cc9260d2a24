"""A chat model that plays a script: ``GenericFakeChatModel`` whose turns may read the
conversation so far (a tool call that needs the id an earlier tool answered)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable

Turn = AIMessage | Callable[[Sequence[BaseMessage]], AIMessage]


class ScriptedChatModel(GenericFakeChatModel):
    """Answers each model call with the next turn of ``messages`` (a message, or a function of
    the conversation that returns one). Binding tools changes nothing: the script knows them."""

    messages: Iterator[Any]

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn: Turn = next(self.messages)
        message = turn(messages) if callable(turn) else turn
        return ChatResult(generations=[ChatGeneration(message=message)])


def script(*turns: Turn) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(turns))


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    """A turn that calls one tool."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def last_tool_text(messages: Sequence[BaseMessage]) -> str:
    """The text of the latest tool answer."""
    found = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
    return str(found.content)


def tool_texts(messages: Sequence[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]
