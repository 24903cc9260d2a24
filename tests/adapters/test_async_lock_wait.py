"""Async hosts never wait on the store's lock with their event loop.

Another process really holds the writer lock; a write called through each async surface
(``MemoryToolset.acall``, LangChain's ``ainvoke``, LlamaIndex's ``acall``, an MCP tool call, the
Anthropic SDK's async function tool and Claude's async memory tool)
waits for it on a worker thread, while a coroutine on the same loop keeps ticking. When the
holder lets go, the write completes. A surface that blocked the loop would stop the ticker (and
the test could not release the holder until the write timed out).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import TextContent
from tests.core.store_helpers import HOLD_LOCK, children

from memquill import MemorySession, MemoryToolset, RecordStore
from memquill_anthropic import MemquillAsyncMemoryTool, async_memory_tools
from memquill_langchain import MemquillToolkit
from memquill_llamaindex import MemquillToolSpec
from memquill_mcp import build_server

Call = Callable[[dict[str, Any]], Coroutine[Any, Any, str]]


def _core(session: MemorySession) -> Call:
    toolset = MemoryToolset(session)

    async def call(arguments: dict[str, Any]) -> str:
        return (await toolset.acall("memory_remember", arguments)).text

    return call


def _langchain(session: MemorySession) -> Call:
    tools = {tool.name: tool for tool in MemquillToolkit(session=session).get_tools()}

    async def call(arguments: dict[str, Any]) -> str:
        return str(await tools["memory_remember"].ainvoke(arguments))

    return call


def _llamaindex(session: MemorySession) -> Call:
    tools = {t.metadata.name: t for t in MemquillToolSpec(session).to_tool_list()}

    async def call(arguments: dict[str, Any]) -> str:
        return (await tools["memory_remember"].acall(**arguments)).content

    return call


def _mcp(session: MemorySession) -> Call:
    async def call(arguments: dict[str, Any]) -> str:
        async with Client(build_server(session), mode="legacy") as client:
            result = await client.call_tool("memory_remember", arguments)
        return "".join(b.text for b in result.content if isinstance(b, TextContent))

    return call


def _anthropic(session: MemorySession) -> Call:
    tools = {tool.name: tool for tool in async_memory_tools(session)}

    async def call(arguments: dict[str, Any]) -> str:
        return str(await tools["memory_remember"].call(arguments))

    return call


def _claude_memory(session: MemorySession) -> Call:
    tool = MemquillAsyncMemoryTool(session)

    async def call(arguments: dict[str, Any]) -> str:
        text = arguments["content"]
        command = {"command": "create", "path": "/memories/note.md", "file_text": text}
        return str(await tool.call(command))

    return call


SURFACES = {
    "core": _core,
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "mcp": _mcp,
    "anthropic": _anthropic,
    "claude-memory": _claude_memory,
}


@pytest.mark.parametrize("surface", SURFACES)
async def test_a_write_waiting_for_the_lock_leaves_the_loop_running(
    tmp_path: Path, surface: str
) -> None:
    session = MemorySession(tmp_path, "async-session", lock_timeout=60)
    call = SURFACES[surface](session)
    lock = tmp_path / "memory" / ".records-lock"
    lock.parent.mkdir()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with children((HOLD_LOCK, (str(lock),))) as (holder,):
        holder.expect("locked")
        ticking = asyncio.create_task(ticker())
        write = asyncio.create_task(call({"content": f"Written through {surface}."}))
        try:
            await asyncio.sleep(0.3)
            seen = ticks
            await asyncio.sleep(0.3)
            # The write is still waiting for the lock, and the loop went on meanwhile.
            assert not write.done()
            assert ticks > seen > 0
            holder.send("release")
            holder.expect("released")
            text = await asyncio.wait_for(write, 60)
        finally:
            ticking.cancel()
            write.cancel()
    if surface == "claude-memory":
        assert text == "File created successfully at: /memories/note.md"
    else:
        receipt = json.loads(text)
        assert receipt["type"] == "memory_write_receipt" and receipt["status"] == "saved"
    contents = [record.content for record in RecordStore(tmp_path).snapshot().records]
    assert contents == [f"Written through {surface}."]
