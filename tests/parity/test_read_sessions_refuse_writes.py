"""A read session cannot write on any surface, even when a write tool is already in hand.

Hiding the write tools is one guard; the other is the check at call time. Here every in-process
surface builds its tools for a writing session whose access then becomes ``read`` (the tools
exist, the right to use them is gone), and each write call must be refused with ``invalid``
and leave the workspace exactly as it was: no record, no ``memory/`` folder, no lock file. A
``memquill-mcp --access read`` subprocess must refuse a ``tools/call`` for a write tool that it
never listed, with the same result on disk.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from tests.adapters.mcp.mcp_helpers import stdio_server, text_of
from tests.core.store_helpers import manual, tree

from memquill import MemorySession, RecordStore
from memquill.errors import Messages
from memquill.plugins import AdapterHarness
from memquill.testing._runner import CoreHarness
from memquill_adk import AdkHarness
from memquill_anthropic import AnthropicHarness
from memquill_langchain import LangChainHarness
from memquill_llamaindex import LlamaIndexHarness
from memquill_mcp import McpClientHarness

SURFACES: Mapping[str, Callable[[MemorySession], AdapterHarness]] = {
    "adk": AdkHarness,
    "anthropic": AnthropicHarness,
    "core": CoreHarness,
    "langchain": LangChainHarness,
    "llamaindex": LlamaIndexHarness,
    "mcp": McpClientHarness,
}


def write_calls(workspace: Path) -> dict[str, dict[str, Any]]:
    """One valid call per write tool: each would succeed for a session that may write."""
    snapshot = RecordStore(workspace).snapshot()
    if not snapshot.records:
        return {"memory_remember": {"content": "Deploys happen on Fridays."}}
    record = snapshot.records[-1]
    current = {"id": record.id, "expected_revision": snapshot.record_revision(record)}
    return {
        "memory_remember": {"content": "Deploys happen on Fridays."},
        "memory_update": {**current, "content": "Deploys happen on Mondays."},
        "memory_forget": current,
    }


@pytest.mark.parametrize("existing", [False, True], ids=["empty", "with-a-record"])
@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_write_call_on_a_read_session_is_refused_and_changes_nothing(
    surface: str, existing: bool, tmp_path: Path
) -> None:
    if existing:
        RecordStore(tmp_path).save([manual("Deploys happen on Tuesdays.")])
    calls = write_calls(tmp_path)
    session = MemorySession(tmp_path, "host-session", "read_write")
    harness = SURFACES[surface](session)
    try:
        assert {name for name, _ in calls.items()} <= {t.name for t in harness.catalogue()}
        session.access = "read"  # the host took the right to write away after tools were built
        before = tree(tmp_path)
        for name, arguments in calls.items():
            result = harness.call(name, arguments)
            assert result.is_error, (surface, name, result.text)
            # The text every surface shows is the core's memory_write_error JSON.
            error = json.loads(result.text)
            assert error["type"] == "memory_write_error", (surface, name, result.text)
            assert (error["code"], error["message"]) == ("invalid", Messages.WRITE_UNAUTHORIZED)
            assert tree(tmp_path) == before, (surface, name)
    finally:
        harness.close()
    assert ("memory" in before) is existing  # nothing was created on the empty workspace


async def test_a_read_only_mcp_subprocess_refuses_write_calls_and_changes_nothing(
    tmp_path: Path,
) -> None:
    RecordStore(tmp_path).save([manual("Deploys happen on Tuesdays.")])
    calls = write_calls(tmp_path)
    before = tree(tmp_path)
    async with Client(stdio_server(tmp_path, "--access", "read", "--session-id", "s")) as client:
        for name, arguments in calls.items():
            refused = await client.call_tool(name, arguments)
            assert refused.is_error is True, name
            assert "Unknown tool" in text_of(refused), name
    assert tree(tmp_path) == before
