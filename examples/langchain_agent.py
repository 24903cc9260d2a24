"""An agent with memory: LangChain's ``create_agent`` and memquill's tools.

Offline (the default), a small scripted model stands in for the LLM and makes the calls a real
one would: remember a fact, search for it, then correct it with the revision the search showed.

    uv run python examples/langchain_agent.py                    # temporary workspace
    uv run python examples/langchain_agent.py --workspace ~/notes

With a real chat model (install its provider package and set its key first):

    uv run python examples/langchain_agent.py --workspace ~/notes --model openai:gpt-4.1-mini
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable

from memquill_langchain import MemquillToolkit

REQUEST = "Remember that deploys happen on Tuesdays. Oh wait, they moved to Wednesdays."


class OfflineMemoryModel(BaseChatModel):
    """A stand-in chat model: remember, search, update with the revision read, answer."""

    @property
    def _llm_type(self) -> str:
        return "offline-memory-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self  # it already knows the memory tools by name

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(isinstance(message, AIMessage) for message in messages)
        last = next((m.artifact for m in reversed(messages) if isinstance(m, ToolMessage)), None)
        # The search result's artifact carries ids and revisions: no text parsing needed.
        records = [hit for hit in (last or {}).get("hits", []) if hit["kind"] == "record"]
        if turn == 0:
            reply = _call("memory_remember", content="Deploys happen on Tuesdays.")
        elif turn == 1:
            reply = _call("memory_search", query="deploys", file_type="longterm")
        elif turn == 2 and records:
            hit = records[0]
            reply = _call(
                "memory_update",
                id=hit["record_id"],
                content="Deploys happen on Wednesdays.",
                expected_revision=hit["record_revision"],
            )
        else:
            reply = AIMessage(content="Noted: deploys now happen on Wednesdays.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def _call(name: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])


def main(argv: Sequence[str] | None = None) -> None:
    """Run one request through an agent with memory and print the conversation."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="notes folder (default: a temporary one)")
    parser.add_argument("--model", help="a chat model for init_chat_model, e.g. openai:gpt-4.1")
    options = parser.parse_args(argv)
    workspace = (options.workspace or Path(tempfile.mkdtemp(prefix="memquill-"))).resolve()
    workspace.mkdir(parents=True, exist_ok=True)

    # The three lines that give an agent memory.
    toolkit = MemquillToolkit.from_workspace(workspace, session_id="example-chat")
    model = init_chat_model(options.model) if options.model else OfflineMemoryModel()
    agent = create_agent(model, toolkit.get_tools(), system_prompt=toolkit.system_prompt())

    state = agent.invoke({"messages": [{"role": "user", "content": REQUEST}]})
    for message in state["messages"]:
        calls = getattr(message, "tool_calls", None) or []
        shown = ", ".join(f"{call['name']}({call['args']})" for call in calls) or message.content
        status = f" [{message.status}]" if isinstance(message, ToolMessage) else ""
        print(f"--- {message.type}{status}\n{shown}")
    print(f"--- {workspace / 'memory' / 'records.md'}")
    print((workspace / "memory" / "records.md").read_text("utf-8"), end="")


if __name__ == "__main__":
    main()
