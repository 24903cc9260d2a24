"""An agent with memory: LlamaIndex's ``FunctionAgent``, memquill's tools and memory block.

Offline (the only mode: LlamaIndex's LLMs live in separate provider packages), a scripted
``MockFunctionCallingLLM`` stands in for the model and makes the calls a real one would:
remember a fact, search for it, then correct it with the id and revision from the write
receipt. Then it shows what the next conversation starts with: the ``Memory`` system message
that ``MemquillMemoryBlock`` fills with recent memory and the hits for the new question.

    uv run python examples/llamaindex_agent.py                    # temporary workspace
    uv run python examples/llamaindex_agent.py --workspace ~/notes

For a real model, pass any function-calling LLM as ``llm`` (for example ``OpenAI(...)`` from
``llama-index-llms-openai``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole, TextBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import create_async_engine

from memquill import open_session
from memquill_llamaindex import MemquillMemoryBlock, MemquillToolSpec

REQUEST = "Remember that deploys happen on Tuesdays. Oh wait, they moved to Wednesdays."
NEXT_QUESTION = "When do deploys happen?"


def offline_model(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
    """A stand-in model: remember, search, update with the receipt's id and revision, answer."""
    results = [m.content or "" for m in messages if m.role == MessageRole.TOOL]
    if not results:
        return _call("memory_remember", content="Deploys happen on Tuesdays.")
    if len(results) == 1:
        return _call("memory_search", query="deploys", file_type="longterm")
    if len(results) == 2:
        receipt = json.loads(results[0])  # the model reads the receipt it was given
        return _call(
            "memory_update",
            id=receipt["recordId"],
            content="Deploys happen on Wednesdays.",
            expected_revision=receipt["recordRevision"],
        )
    answer = TextBlock(text="Noted: deploys now happen on Wednesdays.")
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[answer])


def _call(name: str, **arguments: Any) -> ChatMessage:
    call = ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=arguments)
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])


async def run(workspace: Path) -> None:
    """Run the request through an agent with memory, then show the next conversation's start."""
    # The host names the conversation; the model never does.
    session = open_session(workspace, session_id="example-chat")
    spec = MemquillToolSpec(session)
    llm = MockFunctionCallingLLM(response_generator=offline_model, is_chat_model=True)
    agent = FunctionAgent(tools=spec.to_tool_list(), llm=llm, system_prompt=spec.system_prompt())

    handler = agent.run(user_msg=REQUEST)
    async for event in handler.stream_events():
        if isinstance(event, ToolCallResult):
            output = event.tool_output
            status = "error" if output.is_error else "ok"
            print(f"--- {event.tool_name}({event.tool_kwargs}) [{status}]\n{output.content}")
    print(f"--- answer\n{(await handler).response.content}")
    records = workspace / "memory" / "records.md"
    print(f"--- {records}\n{records.read_text('utf-8')}", end="")

    # LlamaIndex's default chat store is in-memory SQLite; owning its engine lets us close it.
    engine = create_async_engine("sqlite+aiosqlite://")
    try:
        memory = Memory.from_defaults(
            memory_blocks=[MemquillMemoryBlock(session=session)], async_engine=engine
        )
        messages = await memory.aget(input=NEXT_QUESTION)
        print(f"--- the next conversation's system message\n{messages[0].content}")
    finally:
        await engine.dispose()


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and run the example."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workspace", type=Path, help="notes folder (default: a temporary one)")
    options = parser.parse_args(argv)
    workspace = (options.workspace or Path(tempfile.mkdtemp(prefix="memquill-"))).resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    asyncio.run(run(workspace))


if __name__ == "__main__":
    main()
