"""``MemquillMemoryBlock`` feeding extraction: turns flushed by ``Memory`` become facts.

A real ``Memory`` on a SQLite chat store, a real ``FunctionAgent`` with a scripted
``MockFunctionCallingLLM``, and a scripted ``MockLLM`` as the extraction model; real files.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory
from llama_index.core.storage.chat_store.sql import SQLAlchemyChatStore
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from tests.adapters.extraction_models import ScriptedExtractorLLM
from tests.adapters.llamaindex.llamaindex_helpers import AGENT_WARNINGS, Script, run_agent
from tests.core.lifecycle_helpers import REPLIES, USERS, answer, fact

from memquill import MemorySession
from memquill.lifecycle import Extraction, RecordedMessages, job_status
from memquill_llamaindex import MemquillMemoryBlock
from memquill_llamaindex.history import ChatStoreSource

TABLE = "chat"
FACTS = answer(
    fact("m0", "The user lives in Lisbon since March.", "I moved to Lisbon in March"),
    fact("m2", "The user's daughter Ana starts school in September.", "Ana starts school"),
    fact("m4", "The user wants to be called Joana.", "call me Joana"),
)


@pytest.fixture
async def engine() -> AsyncIterator[AsyncEngine]:
    created = create_async_engine("sqlite+aiosqlite://")
    yield created
    await created.dispose()


@pytest.fixture
def store(engine: AsyncEngine) -> SQLAlchemyChatStore:
    return SQLAlchemyChatStore(table_name=TABLE, async_engine=engine)


def _extractor(*replies: str) -> ScriptedExtractorLLM:
    llm = ScriptedExtractorLLM(max_tokens=None)
    llm.replies = list(replies)
    return llm


def _records(workspace: Path) -> list[str]:
    records = MemorySession(workspace).store.snapshot().records
    return [record.content for record in records if record.status == "active"]


def _memory(block: MemquillMemoryBlock, engine: AsyncEngine, **options: Any) -> Memory:
    # The block's chat store and the memory's share one table through one engine (newer
    # llama-index releases also take the store itself: ``chat_store=store``).
    return Memory.from_defaults(
        session_id="chat-1",
        memory_blocks=[block],
        table_name=TABLE,
        async_engine=engine,
        tokenizer_fn=str.split,
        **options,
    )


async def test_flushed_turns_become_facts_with_verbatim_evidence(
    session: MemorySession,
    workspace: Path,
    store: SQLAlchemyChatStore,
    engine: AsyncEngine,
) -> None:
    extractor = _extractor(FACTS)
    block = MemquillMemoryBlock.with_extraction(session, store, extractor)
    memory = _memory(block, engine, token_limit=20, token_flush_size=5)
    users = (*USERS, "Bye.", "See you.", "Later.", "Ok.")
    for user, reply in zip(users, (*REPLIES, "Bye!", "Ciao!", "Sure.", "Ok."), strict=True):
        await memory.aput(ChatMessage(role=MessageRole.USER, content=user))
        await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content=reply))
    await block.drain()

    assert len(await memory.aget_all()) > len(await memory.aget())  # turns were flushed
    assert len(extractor.calls) == 1
    seen = json.loads(_last_prompt(extractor))
    assert [turn["messageId"] for turn in seen["turns"]] == ["m0", "m2", "m4"]
    assert _records(workspace) == [json.loads(FACTS)[i]["content"] for i in range(3)]
    (job,) = job_status(workspace).jobs
    assert (job.status, job.session_id) == ("completed", "chat-1")


async def test_a_short_conversation_is_recorded_when_it_ends(
    session: MemorySession,
    workspace: Path,
    store: SQLAlchemyChatStore,
    engine: AsyncEngine,
) -> None:
    block = MemquillMemoryBlock.with_extraction(session, store, _extractor(FACTS))
    memory = _memory(block, engine)
    for user, reply in zip(USERS, REPLIES, strict=True):
        await memory.aput(ChatMessage(role=MessageRole.USER, content=user))
        await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content=reply))
    assert len(await memory.aget_all()) == 6  # nothing was flushed
    assert await block.arecord_session("chat-1") is True
    await block.drain()
    assert len(_records(workspace)) == 3


@pytest.mark.filterwarnings(AGENT_WARNINGS)
async def test_an_agent_remembers_what_the_user_said_without_a_memory_tool(
    session: MemorySession,
    workspace: Path,
    store: SQLAlchemyChatStore,
    engine: AsyncEngine,
) -> None:
    extractor = _extractor(FACTS)
    block = MemquillMemoryBlock.with_extraction(session, store, extractor)
    memory = _memory(block, engine)
    for user, reply in zip(USERS, REPLIES, strict=True):
        agent = FunctionAgent(tools=[], llm=Script([], answer=reply).llm())
        outcome = await run_agent(agent, user, memory=memory)
        assert outcome.answer == reply and outcome.results == []
    await block.arecord_session("chat-1")
    await block.drain()
    assert _records(workspace)[0] == "The user lives in Lisbon since March."

    script = Script([], answer="In Lisbon.")
    agent = FunctionAgent(tools=[], llm=script.llm())
    await run_agent(agent, "Where do I live?", memory=memory)
    assert "The user lives in Lisbon since March." in (script.seen[0][0].content or "")


async def test_an_edit_in_the_chat_store_during_generation_saves_nothing(
    session: MemorySession,
    workspace: Path,
    store: SQLAlchemyChatStore,
    engine: AsyncEngine,
) -> None:
    extractor = _extractor(FACTS)
    block = MemquillMemoryBlock.with_extraction(session, store, extractor)
    memory = _memory(block, engine)
    for user, reply in zip(USERS, REPLIES, strict=True):
        await memory.aput(ChatMessage(role=MessageRole.USER, content=user))
        await memory.aput(ChatMessage(role=MessageRole.ASSISTANT, content=reply))
    edited = list(await store.get_messages("chat-1", status=None))
    edited[0] = ChatMessage(role=MessageRole.USER, content="I moved to Porto in May.")
    extractor._on_call = lambda call: store.set_messages("chat-1", edited)  # pyright: ignore[reportPrivateUsage]
    await block.arecord_session("chat-1")
    await block.drain()
    assert len(extractor.calls) == 1
    (job,) = job_status(workspace).jobs
    assert (job.status, job.reason) == ("skipped", "source_changed")
    assert _records(workspace) == []


def _last_prompt(extractor: ScriptedExtractorLLM) -> str:
    return extractor.prompts[-1]


def test_the_block_needs_a_chat_store_source(session: MemorySession) -> None:
    extraction = Extraction(session, RecordedMessages())
    with pytest.raises(ValueError, match="ChatStoreSource"):
        MemquillMemoryBlock(session=session, extraction=extraction)
    assert isinstance(ChatStoreSource, type)
