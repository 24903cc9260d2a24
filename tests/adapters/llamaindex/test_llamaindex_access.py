"""Read access offers no write tools; Plan mode refuses writes with the core's message."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.adapters.llamaindex.llamaindex_helpers import Mode

from memquill import MemorySession
from memquill.errors import Messages
from memquill_llamaindex import LlamaIndexHarness, MemquillToolSpec, memquill_tools

READ_TOOLS = ["memory_search", "memory_get", "memory_recent"]


def test_read_access_gets_only_the_read_tools(
    make_session: Callable[..., MemorySession],
) -> None:
    session = make_session("read")
    assert [tool.metadata.name for tool in memquill_tools(session)] == READ_TOOLS
    spec = MemquillToolSpec(session)
    assert spec.spec_functions == READ_TOOLS
    with pytest.raises(ValueError, match="'memory_remember' is not a memquill tool"):
        spec.to_tool_list(["memory_remember"])
    harness = LlamaIndexHarness(session)
    assert [tool.name for tool in harness.catalogue()] == READ_TOOLS
    with pytest.raises(LookupError):
        harness.call("memory_remember", {"content": "Nope."})


def test_read_access_still_reads(make_session: Callable[..., MemorySession]) -> None:
    tools = {tool.metadata.name: tool for tool in memquill_tools(make_session("read"))}
    output = tools["memory_search"].call(query="green tea")
    assert output.is_error is False
    assert output.content.startswith("1. [memory.md:3]")


async def test_plan_mode_refuses_writes_and_changes_nothing(
    session: MemorySession, mode: Mode, workspace: Path
) -> None:
    tools = {tool.metadata.name: tool for tool in memquill_tools(session)}
    saved = tools["memory_remember"].call(content="Ship the release on Friday.")
    receipt = saved.raw_output
    assert saved.is_error is False and receipt["status"] == "saved"
    records = workspace / "memory" / "records.md"
    before = records.read_bytes()

    mode.plan = True  # the host switched to Plan mode after the tools were built
    refused = [
        tools["memory_remember"].call(content="Another fact."),
        await tools["memory_remember"].acall(content="Another fact."),
        tools["memory_forget"].call(
            id=receipt["recordId"], expected_revision=receipt["recordRevision"]
        ),
        tools["memory_update"].call(
            id=receipt["recordId"],
            content="Ship it on Monday.",
            expected_revision=receipt["recordRevision"],
        ),
    ]
    for output, operation in zip(
        refused, ["remember", "remember", "forget", "update"], strict=True
    ):
        assert output.is_error is True
        assert output.content == json.dumps(
            {
                "type": "memory_write_error",
                "operation": operation,
                "code": "invalid",
                "message": Messages.WRITE_UNAUTHORIZED,
            },
            separators=(",", ":"),
        )
        assert output.raw_output == json.loads(output.content)
    assert records.read_bytes() == before

    search = tools["memory_search"].call(query="release Friday")
    assert search.is_error is False
    assert "Ship the release on Friday." in search.content
