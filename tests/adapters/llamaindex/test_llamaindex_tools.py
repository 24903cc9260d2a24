"""The LlamaIndex tools carry the core's metadata, text, structure and error flag unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llama_index.core.tools import FunctionTool
from llama_index.core.tools.tool_spec.base import BaseToolSpec

from memquill import MemorySession, MemoryToolset
from memquill.tools import CATALOGUE
from memquill_llamaindex import MemquillToolSpec, memquill_tools


def _tools(session: MemorySession) -> dict[str, FunctionTool]:
    return {tool.metadata.get_name(): tool for tool in memquill_tools(session)}


def test_metadata_is_the_core_catalogue_and_fits_openai(session: MemorySession) -> None:
    tools = memquill_tools(session)
    assert [tool.metadata.name for tool in tools] == [spec.name for spec in CATALOGUE]
    for tool, spec in zip(tools, CATALOGUE, strict=True):
        assert tool.metadata.description == spec.description
        assert tool.metadata.fn_schema is spec.args
        assert tool.metadata.return_direct is False
        # Raises over 1024 characters; the name must survive OpenAI's name sanitising.
        function = tool.metadata.to_openai_tool()["function"]
        assert function["name"] == spec.name
        assert function["description"] == spec.description


def test_content_is_the_core_text_and_raw_output_its_structure(
    session: MemorySession, workspace: Path
) -> None:
    tools = _tools(session)
    output = tools["memory_remember"].call(content="The user drinks oolong tea every morning.")
    assert output.is_error is False
    receipt = json.loads(output.content)  # JSON text, never a Python repr
    assert receipt["status"] == "saved"
    assert output.raw_output == receipt
    assert output.raw_input == {
        "args": (),
        "kwargs": {"content": "The user drinks oolong tea every morning."},
    }
    assert "oolong tea every morning" in (workspace / "memory" / "records.md").read_text("utf-8")

    search = tools["memory_search"].call(query="oolong tea")
    core = MemoryToolset(session).call("memory_search", {"query": "oolong tea"})
    assert search.content == core.text
    assert search.raw_output == core.structured
    assert search.content.startswith(f"1. [memory/records/{receipt['recordId']}.md:1]")


async def test_acall_gives_the_same_output(session: MemorySession) -> None:
    tool = _tools(session)["memory_recent"]
    sync, asynchronous = tool.call(days=1), await tool.acall(days=1)
    assert (asynchronous.content, asynchronous.raw_output, asynchronous.is_error) == (
        sync.content,
        sync.raw_output,
        sync.is_error,
    )
    assert "## Long-term Memory\nSource: memory.md" in sync.content


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("memory_search", {"query": ""}, "Memory search failed: query: "),
        ("memory_get", {"file_path": "../outside.md"}, "Memory read failed: Access denied"),
        (
            "memory_remember",
            {"content": "x", "source": "forged"},
            '{"type":"memory_write_error","operation":"remember","code":"invalid",'
            '"message":"source: Extra inputs are not permitted"}',
        ),
    ],
)
def test_bad_arguments_get_the_core_rejection_with_is_error(
    session: MemorySession, name: str, arguments: dict[str, str], expected: str
) -> None:
    output = _tools(session)[name].call(**arguments)
    core = MemoryToolset(session).call(name, arguments)
    assert output.is_error is True
    assert output.content == core.text
    assert output.content.startswith(expected)
    assert output.raw_output == core.structured


def test_a_failed_write_changes_nothing_on_disk(session: MemorySession, workspace: Path) -> None:
    output = _tools(session)["memory_remember"].call(content="api_key = sk-" + "a" * 40)
    assert output.is_error is True
    assert json.loads(output.content)["code"] == "secret"
    assert not (workspace / "memory" / "records.md").exists()


def test_the_tool_spec_is_a_base_tool_spec(session: MemorySession) -> None:
    spec = MemquillToolSpec(session)
    assert isinstance(spec, BaseToolSpec)
    assert spec.spec_functions == [tool.name for tool in CATALOGUE]
    assert [tool.metadata.name for tool in spec.to_tool_list()] == spec.spec_functions
    assert spec.system_prompt() == MemoryToolset(session).system_prompt()


def test_the_tool_spec_selects_tools_by_name(session: MemorySession) -> None:
    spec = MemquillToolSpec(session)
    chosen = spec.to_tool_list(["memory_recent", ("memory_search", "memory_search")])
    assert [tool.metadata.name for tool in chosen] == ["memory_recent", "memory_search"]
    with pytest.raises(ValueError, match="'memory_nope' is not a memquill tool"):
        spec.to_tool_list(["memory_nope"])


async def test_the_async_tool_list_matches(session: MemorySession) -> None:
    tools = await MemquillToolSpec(session).to_tool_list_async()
    assert [tool.metadata.name for tool in tools] == [spec.name for spec in CATALOGUE]


def test_from_workspace_builds_the_session(workspace: Path) -> None:
    spec = MemquillToolSpec.from_workspace(workspace, "chat-9", "read_write", lambda: False)
    assert spec.toolset.session.session_id == "chat-9"
    tools = {tool.metadata.name: tool for tool in spec.to_tool_list()}
    refused = tools["memory_remember"].call(content="Nope.")
    assert refused.is_error and json.loads(refused.content)["code"] == "invalid"
    reader = MemquillToolSpec.from_workspace(workspace, access="read")
    assert reader.spec_functions == ["memory_search", "memory_get", "memory_recent"]
