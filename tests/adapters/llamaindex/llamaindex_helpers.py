"""Shared pieces of the LlamaIndex adapter tests: the workspace, the clock, Plan mode, a script."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from pydantic import Field

AGENT_WARNINGS = "ignore::pydantic.warnings.PydanticDeprecationWarning:inspect"
"""Third-party: building a ``FunctionAgent`` (a pydantic model), llama-index-workflows scans it
with ``inspect.getmembers``, which reads pydantic's deprecated ``__fields__`` and friends. Only
pydantic deprecations raised from ``inspect`` are ignored."""

NO_NETWORK = """\
import socket

def _refuse(*args, **kwargs):
    raise OSError("network access is disabled in the LlamaIndex adapter tests")

_connect = socket.socket.connect
socket.socket.connect = lambda self, address: (
    _connect(self, address) if self.family == socket.AF_UNIX else _refuse()
)
socket.socket.connect_ex = _refuse
socket.getaddrinfo = socket.create_connection = _refuse
"""
"""A prelude for code run in a child interpreter: the refusals of the ``_no_network`` fixture."""

NOW = datetime(2026, 9, 22, 12, 0, tzinfo=UTC)
FILES = {
    "memory.md": "# Long-term memory\n\n- The user prefers green tea over coffee.\n",
    "memory/daily/2026-09-21.md": "# 2026-09-21\n\nDeployed the billing service on Monday.\n",
    "notes/project.md": (
        "---\ntags: [project]\n---\n# Tea shop\n\nThe tea shop project ships in October.\n"
    ),
    "notes/garden.md": "# Garden\n\nPlant tomatoes and basil in spring.\n",
}


class Mode:
    """The host's Plan-mode switch, asked by ``authorize_write`` at every write."""

    def __init__(self) -> None:
        self.plan = False

    def authorize(self) -> bool:
        return not self.plan


def build_workspace(root: Path) -> Path:
    """Write :data:`FILES` under ``root`` and return it."""
    for relative, text in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return root


class _ScriptedLLM(MockFunctionCallingLLM):
    """The mock function-calling LLM, recording the tool names each request offers.

    Recorded where every supported llama-index-core release hands the tools to the model (the
    mock's response generator receives them only in newer releases).
    """

    offered: list[list[str]] = Field(default_factory=list, exclude=True)

    # Declared so a type checker sees the mock's own constructor: pydantic's model transform
    # would otherwise describe one built from the fields, where the generator is no field.
    def __init__(self, response_generator: Callable[..., ChatMessage], **kwargs: Any) -> None:
        super().__init__(response_generator=response_generator, **kwargs)

    def _prepare_chat_with_tools(self, tools: Sequence[Any], *args: Any, **kwargs: Any) -> dict:
        self.offered.append([tool.metadata.name for tool in tools])
        return super()._prepare_chat_with_tools(tools, *args, **kwargs)


class Script:
    """A scripted model: one tool call per step, then a text answer; it records what it saw.

    Use ``Script(...).llm()`` as a ``FunctionAgent``'s LLM. Step ``n`` is chosen by how many
    tool results the conversation already holds, as a real model would continue after them.
    """

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], answer: str) -> None:
        self.calls = calls
        self.answer = answer
        self.seen: list[list[ChatMessage]] = []
        self.offered: list[list[str]] = []

    def respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        del kwargs  # newer releases also pass the tools here; _ScriptedLLM records them
        self.seen.append(list(messages))
        done = sum(message.role == MessageRole.TOOL for message in messages)
        if done < len(self.calls):
            name, arguments = self.calls[done]
            call = ToolCallBlock(tool_call_id=f"call-{done}", tool_name=name, tool_kwargs=arguments)
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text=self.answer)])

    def llm(self) -> MockFunctionCallingLLM:
        llm = _ScriptedLLM(response_generator=self.respond, is_chat_model=True)
        llm.offered = self.offered
        return llm

    def tool_messages(self) -> list[str]:
        """The tool results the model was finally shown, in order."""
        last = self.seen[-1]
        return [message.content or "" for message in last if message.role == MessageRole.TOOL]


async def run_agent(agent: FunctionAgent, user_msg: str, **kwargs: Any) -> RunOutcome:
    """Run ``agent`` and collect its answer and every ``ToolCallResult`` it produced."""
    handler = agent.run(user_msg=user_msg, **kwargs)
    results = [
        event async for event in handler.stream_events() if isinstance(event, ToolCallResult)
    ]
    output = await handler
    return RunOutcome(str(output.response.content), results)


@dataclass(frozen=True)
class RunOutcome:
    answer: str
    results: list[ToolCallResult]
