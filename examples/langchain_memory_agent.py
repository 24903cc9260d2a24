"""An agent that remembers what the user says, with no memory tool: ``MemquillMiddleware``.

Three turns in one thread; the middleware records each finished turn, and after the third it
extracts the facts the user stated (each saved only with a verbatim quote of the user's words)
in the background. A new thread then asks a question, and the answer comes from memory that
the middleware put into the model's prompt.

Offline (the default), small stand-in models play the agent and the extractor:

    uv run python examples/langchain_memory_agent.py                    # temporary workspace
    uv run python examples/langchain_memory_agent.py --workspace ~/notes

With real chat models (install the provider package and set its key first):

    uv run python examples/langchain_memory_agent.py --model openai:gpt-4.1-mini
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.chat_models import init_chat_model
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from memquill import MemorySession
from memquill.lifecycle import job_status
from memquill_langchain import MemoryScope, MemquillMiddleware, RunScope

CONVERSATION = (
    "Hi! I moved to Lisbon in March. I work as a marine biologist.",
    "My daughter Ana starts school in September. Any tips for the first week?",
    "Thanks. I prefer short answers, by the way.",
)
QUESTION = "Where do I live, and what is my job?"


class OfflineExtractor(BaseChatModel):
    """Stands in for an extraction model: every first-person sentence the user wrote becomes a
    fact, quoted verbatim (what memquill checks before anything is saved)."""

    @property
    def _llm_type(self) -> str:
        return "offline-extractor"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turns = json.loads(messages[-1].text)["turns"]
        facts = [
            {"messageId": turn["messageId"], "content": _fact(sentence), "evidence": sentence}
            for turn in turns
            for sentence in re.findall(r"[^.!?]+[.!?]", turn["user"])
            if re.match(r"\s*(I|My) ", sentence) and not sentence.endswith("?")
        ]
        for fact in facts:
            fact["evidence"] = fact["evidence"].strip()
            fact["content"] = fact["content"].strip()
        answer = AIMessage(json.dumps(facts))
        return ChatResult(generations=[ChatGeneration(message=answer)])


class OfflineAgent(BaseChatModel):
    """Stands in for the agent's model: answers a question from the memory in its prompt."""

    @property
    def _llm_type(self) -> str:
        return "offline-agent"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = next((m.text for m in messages if isinstance(m, SystemMessage)), "")
        question = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
        if not question.endswith("?") or "Where do I live" not in question:
            reply = "Noted."
        else:
            lines = (line.strip() for line in system.splitlines() if "The user " in line)
            known = list(dict.fromkeys(lines))
            reply = "From memory:\n" + "\n".join(known) if known else "I don't know yet."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(reply))])


def _fact(sentence: str) -> str:
    return f'The user said: "{sentence.strip()}"'


def main(argv: Sequence[str] | None = None) -> None:
    """Talk to an agent for three turns, then ask it what it learned, in a new thread."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="memory folder (default: a temporary one)")
    parser.add_argument("--model", help="a chat model for init_chat_model, e.g. openai:gpt-4.1")
    options = parser.parse_args(argv)
    workspace = (options.workspace or Path(tempfile.mkdtemp(prefix="memquill-"))).resolve()
    workspace.mkdir(parents=True, exist_ok=True)

    def scope(run: RunScope) -> MemoryScope:
        return MemoryScope(workspace)  # one user here; map run.user_id to a folder for many

    saver = InMemorySaver()
    extractor = init_chat_model(options.model) if options.model else OfflineExtractor()
    memory = MemquillMiddleware(scope, model=extractor, checkpointer=saver)
    model = init_chat_model(options.model) if options.model else OfflineAgent()
    agent = create_agent(model, [], middleware=[memory], checkpointer=saver)

    for text in CONVERSATION:
        state = agent.invoke({"messages": [HumanMessage(text)]}, _thread("first"))
        print(f"user: {text}\nagent: {state['messages'][-1].text}")
    memory.wait(120)  # extraction ran in the background; a script waits before it ends

    for job in job_status(workspace).jobs:
        print(f"--- extraction job {job.id[:12]}: {job.status}")
    records = MemorySession(workspace).store.snapshot().records
    print("--- remembered (memory/records.md):")
    for record in records:
        print(f"  - {record.content}")

    state = agent.invoke({"messages": [HumanMessage(QUESTION)]}, _thread("second"))
    print(f"--- a new thread\nuser: {QUESTION}\nagent: {state['messages'][-1].text}")


def _thread(name: str) -> Any:
    return {"configurable": {"thread_id": name}}


if __name__ == "__main__":
    main()
