"""``MemquillMemoryBlock`` inside LlamaIndex's ``Memory``: recent memory reaches the model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock
from llama_index.core.memory import Memory
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from tests.adapters.llamaindex.llamaindex_helpers import AGENT_WARNINGS, Script, run_agent

from memquill import MemorySession, MemoryToolset
from memquill_llamaindex import MemquillMemoryBlock, memquill_tools

FACT = "The user drinks oolong tea every morning."
QUESTION = "Which tea do I drink in the morning?"


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    # Memory's default chat store is an in-memory SQLite engine it never closes; one the test
    # owns can be disposed, so no connection is left for the garbage collector to complain about.
    engine = create_async_engine("sqlite+aiosqlite://")
    yield engine
    await engine.dispose()


HITS = "## Memory matching the latest message\n"
"""The heading that keeps the hits apart from the review of recent memory."""


def _core_texts(session: MemorySession, query: str) -> tuple[str, str]:
    toolset = MemoryToolset(session)
    recent = toolset.call("memory_recent", {}).text
    return recent, HITS + toolset.call("memory_search", {"query": query}).text


@pytest.fixture
def remembered(session: MemorySession) -> MemorySession:
    assert not MemoryToolset(session).call("memory_remember", {"content": FACT}).is_error
    return session


async def test_memory_injects_recent_memory_and_hits_for_the_question(
    remembered: MemorySession, engine: AsyncEngine
) -> None:
    memory = Memory.from_defaults(
        memory_blocks=[MemquillMemoryBlock(session=remembered)], async_engine=engine
    )
    await memory.aput(ChatMessage(role=MessageRole.USER, content=QUESTION))
    messages = await memory.aget()

    recent, hits = _core_texts(remembered, QUESTION)
    assert FACT in recent and FACT in hits
    assert [message.role for message in messages] == [MessageRole.SYSTEM, MessageRole.USER]
    assert messages[0].content == f"<memory>\n<memquill>\n{recent}\n{hits}\n</memquill>\n</memory>"
    assert messages[1].content == QUESTION


async def test_the_system_message_tells_recent_memory_from_the_hits(
    remembered: MemorySession, engine: AsyncEngine
) -> None:
    # Issue 23, item 6: one heading over the remembered facts, and the hits under their own.
    toolset = MemoryToolset(remembered)
    toolset.call("memory_remember", {"content": "The user's kettle is blue."})
    memory = Memory.from_defaults(
        memory_blocks=[MemquillMemoryBlock(session=remembered)], async_engine=engine
    )
    await memory.aput(ChatMessage(role=MessageRole.USER, content=QUESTION))
    system = str((await memory.aget())[0].content)
    assert system.count("## Active Memory") == 1
    recent, _, hits = system.partition(HITS)
    assert recent.count("Source: memory/records/") == 2 and "1. [" not in recent
    assert hits.startswith("1. [memory/records/") and FACT in hits


async def test_the_block_returns_the_core_texts_unchanged(remembered: MemorySession) -> None:
    block = MemquillMemoryBlock(session=remembered, days=1, search_limit=2)
    content = await block.aget([ChatMessage(role=MessageRole.USER, content=QUESTION)])
    toolset = MemoryToolset(remembered)
    assert content == [
        TextBlock(text=toolset.call("memory_recent", {"days": 1}).text),
        TextBlock(text=HITS + toolset.call("memory_search", {"query": QUESTION, "limit": 2}).text),
    ]


@pytest.mark.parametrize(
    ("messages", "search_limit"),
    [
        ([], 5),
        ([ChatMessage(role=MessageRole.USER, content="zebra unicorn")], 5),
        ([ChatMessage(role=MessageRole.USER, content=QUESTION)], 0),
        ([ChatMessage(role=MessageRole.ASSISTANT, content=QUESTION)], 5),
    ],
    ids=["no-messages", "no-hits", "search-off", "no-user-message"],
)
async def test_without_hits_only_recent_memory_is_given(
    remembered: MemorySession, messages: list[ChatMessage], search_limit: int
) -> None:
    block = MemquillMemoryBlock(session=remembered, search_limit=search_limit)
    recent = MemoryToolset(remembered).call("memory_recent", {}).text
    assert await block.aget(messages) == [TextBlock(text=recent)]


async def test_an_empty_workspace_says_so(tmp_path: Path) -> None:
    block = MemquillMemoryBlock(session=MemorySession(tmp_path, "chat-1", "read"))
    assert await block.aget([]) == [TextBlock(text="No recent memories found.")]


async def test_truncation_drops_the_hits_first(remembered: MemorySession) -> None:
    block = MemquillMemoryBlock(session=remembered)
    content = await block.aget([ChatMessage(role=MessageRole.USER, content=QUESTION)])
    assert len(content) == 2
    assert await block.atruncate(content, 10) == content[:1]
    assert await block.atruncate(content[:1], 10) is None


async def test_flushed_chat_is_never_written(
    session: MemorySession, workspace: Path, engine: AsyncEngine
) -> None:
    block = MemquillMemoryBlock(session=session)
    memory = Memory.from_defaults(
        memory_blocks=[block],
        async_engine=engine,
        token_limit=40,
        token_flush_size=10,
        tokenizer_fn=str.split,
    )
    for turn in range(6):
        await memory.aput(ChatMessage(role=MessageRole.USER, content=f"{FACT} Turn {turn}."))
        await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content="Noted, thank you."))
    assert len(await memory.aget_all()) > len(await memory.aget())  # some turns were flushed
    assert not (workspace / "memory" / "records.md").exists()


@pytest.mark.filterwarnings(AGENT_WARNINGS)
async def test_an_agent_sees_memquill_memory_in_its_system_message(
    remembered: MemorySession, engine: AsyncEngine
) -> None:
    memory = Memory.from_defaults(
        memory_blocks=[MemquillMemoryBlock(session=remembered)], async_engine=engine
    )
    script = Script([], answer="You drink oolong tea.")
    agent = FunctionAgent(tools=memquill_tools(remembered), llm=script.llm())
    outcome = await run_agent(agent, QUESTION, memory=memory)

    assert outcome.answer == "You drink oolong tea."
    system, user = script.seen[0]
    recent, hits = _core_texts(remembered, QUESTION)
    assert system.role == MessageRole.SYSTEM
    assert system.content == f"<memory>\n<memquill>\n{recent}\n{hits}\n</memquill>\n</memory>"
    assert (user.role, user.content) == (MessageRole.USER, QUESTION)
