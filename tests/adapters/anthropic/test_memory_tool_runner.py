"""The memory tool driven by the SDK's own tool runner, against a scripted Messages API.

``client.beta.messages.tool_runner`` (sync and async) talks HTTP to a real server on 127.0.0.1
(:mod:`.scripted_api`) that answers like the Messages API with a realistic sequence of tool
calls: view the memory directory, create a file, correct it with ``str_replace``, look it up
with ``memory_search`` (memquill's own tool, beside the memory tool), try to create it again (an
error result), view it, then delete it and view the directory in one reply, and a final text.
The SDK's request and response code runs for real: the test reads the ``tool_result`` blocks the
SDK sent back to the server, their order, their text and their ``is_error`` flags. No network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from anthropic import Anthropic, AsyncAnthropic
from anthropic.types.beta import BetaMessageParam
from tests.adapters.anthropic.scripted_api import ScriptedMessagesAPI, text, tool_use

from memquill import MemorySession, RecordStore
from memquill_anthropic import (
    MemquillAsyncMemoryTool,
    MemquillMemoryTool,
    async_memory_tools,
    memory_tools,
)

PATH = "/memories/preferences.md"
MODEL = "claude-scripted"  # the server answers any name; a real one may be deprecated some day
LISTING = (
    "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:"
)
REPLIES: Final = [
    [text("Let me check my memory first."), tool_use("memory", command="view", path="/memories")],
    [
        tool_use(
            "memory",
            command="create",
            path=PATH,
            file_text="# Preferences\n- Coffee: black\n",
        )
    ],
    [tool_use("memory", command="str_replace", path=PATH, old_str="black", new_str="oat milk")],
    [tool_use("memory_search", query="coffee oat milk")],
    [tool_use("memory", command="create", path=PATH, file_text="# Preferences\n")],
    [tool_use("memory", command="view", path=PATH)],
    [
        tool_use("memory", command="delete", path=PATH),
        tool_use("memory", command="view", path="/memories"),
    ],
    [text("Noted, and then cleared again as you asked.")],
]
EXPECTED_RESULTS: Final[list[list[tuple[str, bool]]]] = [
    [(f"{LISTING}\n0B\t/memories", False)],
    [(f"File created successfully at: {PATH}", False)],
    [
        (
            "The memory file has been edited. Here is the snippet showing the change (with line "
            "numbers):\n     1\t# Preferences\n     2\t- Coffee: oat milk\n     3\t",
            False,
        )
    ],
    [],  # memory_search: checked on its own below
    [(f"File {PATH} already exists", True)],
    [
        (
            f"Here's the content of {PATH} with line numbers:\n"
            "     1\t# Preferences\n     2\t- Coffee: oat milk\n     3\t",
            False,
        )
    ],
    [(f"Successfully deleted {PATH}", False), (f"{LISTING}\n0B\t/memories", False)],
]
# A plain dict, as users write it.
MESSAGES: Final[list[BetaMessageParam]] = [
    {"role": "user", "content": "I take my coffee with oat milk now."}
]


def check_the_conversation(api: ScriptedMessagesAPI, final: Any, workspace: Path) -> None:
    assert len(api.requests) == len(REPLIES)
    first = api.requests[0]
    assert {"type": "memory_20250818", "name": "memory"} in first["tools"]
    names = [tool.get("name") for tool in first["tools"]]
    assert names == ["memory", *(t.name for t in memory_tools(MemorySession(workspace, "x")))]
    # The key, as the SDK release sends it (x-api-key, or a bearer token in newer ones).
    for header in api.headers:
        assert "test-key" in (header.get("x-api-key"), header.get("authorization", "")[7:])
    ids = iter(f"toolu_{n:02d}" for n in range(1, 9))
    for turn, expected in enumerate(EXPECTED_RESULTS, 1):
        results = api.tool_results(turn)
        if turn == 4:
            (search,) = results
            assert search["tool_use_id"] == next(ids) and "is_error" not in search
            assert search["content"].startswith("1. [memory/records/")
            assert "key:preferences.md" in search["content"]
            assert "- Coffee: oat milk" in search["content"]
            continue
        sent = [(r["content"], bool(r.get("is_error"))) for r in results]
        assert sent == expected, f"turn {turn}"
        assert [r["tool_use_id"] for r in results] == [next(ids) for _ in expected]
    assert [block.text for block in final.content] == [
        "Noted, and then cleared again as you asked."
    ]
    # The file was a fact, corrected once, then forgotten: no text of it is left.
    records = RecordStore(workspace).snapshot().records
    assert [r.status for r in records] == ["revoked", "revoked"]
    assert "oat milk" not in (workspace / "memory" / "records.md").read_text("utf-8")


def test_the_sync_tool_runner_drives_the_memory_tool(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-42")
    with ScriptedMessagesAPI(REPLIES) as api:
        client = Anthropic(api_key="test-key", base_url=api.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1024,
            messages=MESSAGES,
            tools=[MemquillMemoryTool(session), *memory_tools(session)],
        )
        final = runner.until_done()
    check_the_conversation(api, final, tmp_path)


async def test_the_async_tool_runner_drives_the_async_memory_tool(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-42")
    with ScriptedMessagesAPI(REPLIES) as api:
        client = AsyncAnthropic(api_key="test-key", base_url=api.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model=MODEL,
            max_tokens=1024,
            messages=MESSAGES,
            tools=[MemquillAsyncMemoryTool(session), *async_memory_tools(session)],
        )
        final = await runner.until_done()
        await client.close()
    check_the_conversation(api, final, tmp_path)
