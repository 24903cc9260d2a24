"""An agent that remembers what the user says, with no memory tool: LlamaIndex's ``Memory``
with ``MemquillMemoryBlock`` feeding automatic extraction.

Three turns with a ``FunctionAgent``; when the conversation ends, the block records its turns
(turns flushed out of short-term memory are recorded as they go) and the facts the user stated
are extracted in the background, each saved only with a verbatim quote of the user's words.
A new conversation then asks a question; the answer comes from the memory the block put into
the system message.

Offline (the only mode: LlamaIndex's LLMs live in separate provider packages), stand-in models
play the agent and the extractor:

    uv run python examples/llamaindex_memory_agent.py                    # temporary workspace
    uv run python examples/llamaindex_memory_agent.py --workspace ~/notes

For real models, pass any LlamaIndex ``LLM`` as the agent's ``llm`` and to
``MemquillMemoryBlock.with_extraction`` (for example ``OpenAI(...)``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatResponse
from llama_index.core.llms import ChatMessage, MessageRole, TextBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLM
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
from sqlalchemy.ext.asyncio import create_async_engine

from memquill import open_session
from memquill.lifecycle import job_status
from memquill_llamaindex import MemquillMemoryBlock

CONVERSATION = (
    "Hi! I moved to Lisbon in March. I work as a marine biologist.",
    "My daughter Ana starts school in September. Any tips for the first week?",
    "Thanks. I prefer short answers, by the way.",
)
QUESTION = "Where do I live, and what is my job?"


class OfflineExtractor(MockLLM):
    """Stands in for an extraction model: every first-person sentence the user wrote becomes a
    fact, quoted verbatim (what memquill checks before anything is saved)."""

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        turns = json.loads(messages[-1].content or "{}")["turns"]
        facts = [
            {
                "messageId": turn["messageId"],
                "content": f'The user said: "{sentence.strip()}"',
                "evidence": sentence.strip(),
            }
            for turn in turns
            for sentence in re.findall(r"[^.!?]+[.!?]", turn["user"])
            if re.match(r"\s*(I|My) ", sentence) and not sentence.endswith("?")
        ]
        answer = ChatMessage(role=MessageRole.ASSISTANT, content=json.dumps(facts))
        return ChatResponse(message=answer)


def offline_agent(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """Stands in for the agent's model: answers a question from the memory in its prompt."""
    system = next((m.content or "" for m in messages if m.role == MessageRole.SYSTEM), "")
    question = next(m.content or "" for m in reversed(messages) if m.role == MessageRole.USER)
    if "Where do I live" in question:
        lines = (line.strip() for line in system.splitlines() if "The user " in line)
        known = list(dict.fromkeys(lines))
        reply = "From memory:\n" + "\n".join(known) if known else "I don't know yet."
    else:
        reply = "Noted."
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text=reply)])


async def run(workspace: Path) -> None:
    """Three turns, the extraction, then a question in a new conversation."""
    engine = create_async_engine("sqlite+aiosqlite://")  # the chat store; we own its engine
    store = SQLAlchemyChatStore(table_name="chat", async_engine=engine)
    session = open_session(workspace)
    block = MemquillMemoryBlock.with_extraction(session, store, OfflineExtractor(max_tokens=None))
    try:
        memory = Memory.from_defaults(session_id="first", memory_blocks=[block], chat_store=store)
        for text in CONVERSATION:
            agent = FunctionAgent(tools=[], llm=_agent_llm())
            answer = await agent.run(user_msg=text, memory=memory)
            print(f"user: {text}\nagent: {answer.response.content}")
        await block.arecord_session("first")  # the conversation ended
        await block.drain()  # the extraction ran in the background; wait before the loop ends

        for job in job_status(workspace).jobs:
            print(f"--- extraction job {job.id[:12]}: {job.status}")
        print("--- remembered (memory/records.md):")
        for record in session.store.snapshot().records:
            print(f"  - {record.content}")

        later = Memory.from_defaults(session_id="second", memory_blocks=[block], chat_store=store)
        answer = await FunctionAgent(tools=[], llm=_agent_llm()).run(
            user_msg=QUESTION, memory=later
        )
        print(f"--- a new conversation\nuser: {QUESTION}\nagent: {answer.response.content}")
    finally:
        await engine.dispose()


def _agent_llm() -> MockFunctionCallingLLM:
    return MockFunctionCallingLLM(response_generator=offline_agent, is_chat_model=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run the example."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="memory folder (default: a temporary one)")
    options = parser.parse_args(argv)
    workspace = (options.workspace or Path(tempfile.mkdtemp(prefix="memquill-"))).resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(workspace))


if __name__ == "__main__":
    main()
