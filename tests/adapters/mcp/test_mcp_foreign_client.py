"""A client nobody here wrote: llama-index-tools-mcp's ``BasicMCPClient`` over stdio.

It spawns ``memquill-mcp`` for every request (its own client code, its own stdio handling),
lists the tools, turns them into LlamaIndex ``FunctionTool``\\ s with ``McpToolSpec`` and calls
search and remember through them.
"""

from __future__ import annotations

import json
from pathlib import Path

from llama_index.tools.mcp import BasicMCPClient, McpToolSpec  # pyright: ignore[reportMissingTypeStubs]
from mcp.types import CallToolResult
from tests.adapters.mcp.mcp_helpers import records, stdio_env, text_of

from memquill import MemorySession, MemoryToolset
from memquill.tools import CATALOGUE
from memquill_mcp import server_command


def _client(workspace: Path) -> BasicMCPClient:
    command, *prefix = server_command()
    return BasicMCPClient(
        command,
        args=[*prefix, "--workspace", str(workspace), "--session-id", "llama-session"],
        env=stdio_env(),
    )


async def test_llama_index_lists_and_calls_memquill_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Garden\n\nWater the basil every morning.\n", "utf-8")
    client = _client(tmp_path)

    listed = await client.list_tools()
    assert [tool.name for tool in listed.tools] == [spec.name for spec in CATALOGUE]
    assert [tool.description for tool in listed.tools] == [spec.description for spec in CATALOGUE]

    tools = {tool.metadata.name: tool for tool in await McpToolSpec(client).to_tool_list_async()}
    assert set(tools) == {spec.name for spec in CATALOGUE}

    remembered = await tools["memory_remember"].acall(content="The basil likes morning sun.")
    receipt = remembered.raw_output
    assert isinstance(receipt, CallToolResult)
    assert receipt.is_error is False, text_of(receipt)
    assert receipt.structured_content is not None
    assert receipt.structured_content["sourceSessionId"] == "llama-session"
    assert json.loads(text_of(receipt)) == receipt.structured_content

    searched = await tools["memory_search"].acall(query="basil")
    hits = searched.raw_output
    assert isinstance(hits, CallToolResult) and hits.is_error is False
    core = MemoryToolset(MemorySession(tmp_path, "reference")).call(
        "memory_search", {"query": "basil"}
    )
    assert text_of(hits) == core.text
    assert hits.structured_content == core.structured
    assert "The basil likes morning sun." in text_of(hits)
    assert "notes.md" in text_of(hits)

    stored = records(tmp_path)
    assert stored is not None and "The basil likes morning sun." in stored.decode()


async def test_llama_index_sees_unknown_keys_refused_as_in_python(tmp_path: Path) -> None:
    forged = {"content": "Forged.", "source": {"kind": "manual"}}
    # llama-index annotates ``arguments`` as a bare dict.
    result = await _client(tmp_path).call_tool("memory_remember", forged)  # pyright: ignore[reportUnknownMemberType]
    core = MemoryToolset(MemorySession(tmp_path, "reference")).call("memory_remember", forged)
    assert result.is_error is True
    assert text_of(result) == core.text
    assert records(tmp_path) is None
