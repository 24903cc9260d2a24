"""``tools/list`` and ``tools/call`` over real JSON-RPC: everything as the core defines it.

Names, titles, descriptions, input and output schemas, annotations and server instructions come
from the core unchanged; structured content validates against the advertised output schema
(with ``jsonschema``, as MCP clients do), including on read-tool failures. A write failure
carries no structured content, and its text is the core's ``memory_write_error`` object.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.types import CallToolResult, Tool
from tests.adapters.mcp.mcp_helpers import text_of

from memquill import MemorySession, MemoryToolset, ToolSpec
from memquill.tools import CATALOGUE, SEARCH_PROMPT, WRITE_PROMPT
from memquill_mcp import build_server
from memquill_mcp.server import READ_SERVER_NAME, WRITE_SERVER_NAME

SPECS = {spec.name: spec for spec in CATALOGUE}
READ_TOOLS = ["memory_search", "memory_get", "memory_recent"]
WRITE_TOOLS = ["memory_remember", "memory_update", "memory_forget"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.md").write_text("# Notes\n\nRemember saffron.\nSee [[ideas]].\n", "utf-8")
    return tmp_path


def _listed(tools: list[Tool]) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools}


def _validates(spec: ToolSpec, result: CallToolResult) -> None:
    assert result.structured_content is not None, f"{spec.name}: no structured content"
    jsonschema.validate(result.structured_content, spec.output_schema())


@pytest.mark.parametrize(
    ("access", "write_only", "names", "instructions", "server_name"),
    [
        (
            "read_write",
            False,
            READ_TOOLS + WRITE_TOOLS,
            f"{SEARCH_PROMPT}\n\n{WRITE_PROMPT}",
            "memquill",
        ),
        ("read", False, READ_TOOLS, SEARCH_PROMPT, READ_SERVER_NAME),
        ("read_write", True, WRITE_TOOLS, WRITE_PROMPT, WRITE_SERVER_NAME),
    ],
)
async def test_tools_list_is_the_core_catalogue(
    workspace: Path,
    access: Any,
    write_only: bool,
    names: list[str],
    instructions: str,
    server_name: str,
) -> None:
    session = MemorySession(workspace, "listing", access)
    async with Client(build_server(session, write_only=write_only), mode="legacy") as client:
        assert client.instructions == instructions
        assert client.server_info is not None and client.server_info.name == server_name
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == names
    for tool in tools:
        spec = SPECS[tool.name]
        assert tool.title == spec.title
        assert tool.description == spec.description
        assert tool.input_schema == spec.input_schema()
        assert tool.output_schema == spec.output_schema()
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is spec.hints.read_only
        assert tool.annotations.destructive_hint is spec.hints.destructive
        assert tool.annotations.idempotent_hint is spec.hints.idempotent
        assert tool.annotations.open_world_hint is spec.hints.open_world


async def test_instructions_match_the_core_prompt(workspace: Path) -> None:
    for access in ("read", "read_write"):
        session = MemorySession(workspace, "listing", access)
        async with Client(build_server(session), mode="legacy") as client:
            assert client.instructions == MemoryToolset(session).system_prompt()


async def test_write_input_schemas_forbid_unknown_keys(workspace: Path) -> None:
    session = MemorySession(workspace, "listing")
    async with Client(build_server(session), mode="legacy") as client:
        listed = _listed((await client.list_tools()).tools)
    for name in WRITE_TOOLS:
        assert listed[name].input_schema.get("additionalProperties") is False, name


async def test_structured_content_validates_against_the_output_schema(workspace: Path) -> None:
    session = MemorySession(workspace, "listing")
    async with Client(build_server(session), mode="legacy") as client:
        saved = await client.call_tool("memory_remember", {"content": "Tea at four."})
        receipt = saved.structured_content
        assert receipt is not None
        calls: list[tuple[str, dict[str, Any]]] = [
            ("memory_search", {"query": "saffron tea"}),
            ("memory_get", {"file_path": "notes.md"}),
            ("memory_get", {"file_path": f"memory/records/{receipt['recordId']}.md"}),
            ("memory_recent", {}),
        ]
        for name, arguments in calls:
            result = await client.call_tool(name, arguments)
            assert not result.is_error, text_of(result)
            _validates(SPECS[name], result)
        updated = await client.call_tool(
            "memory_update",
            {
                "id": receipt["recordId"],
                "content": "Tea at five.",
                "expected_revision": receipt["recordRevision"],
            },
        )
        assert updated.structured_content is not None
        forgotten = await client.call_tool(
            "memory_forget",
            {
                "id": updated.structured_content["recordId"],  # a correction is a new version
                "expected_revision": updated.structured_content["recordRevision"],
            },
        )
    for name, result in (("memory_remember", saved), ("memory_update", updated)):
        _validates(SPECS[name], result)
    _validates(SPECS["memory_forget"], forgotten)
    assert receipt["sourceSessionId"] == "listing"
    assert json.loads(text_of(saved)) == receipt


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("memory_search", {"query": ""}),
        ("memory_get", {"file_path": "../outside.md"}),
        ("memory_get", {"file_path": ".env"}),
        ("memory_recent", {"days": 30}),
    ],
)
async def test_read_failures_carry_conforming_structured_content(
    workspace: Path, name: str, arguments: dict[str, Any]
) -> None:
    session = MemorySession(workspace, "listing")
    core = MemoryToolset(session).call(name, arguments)
    async with Client(build_server(session), mode="legacy") as client:
        result = await client.call_tool(name, arguments)
    assert result.is_error is True
    assert text_of(result) == core.text
    assert result.structured_content == core.structured
    _validates(SPECS[name], result)
    assert result.structured_content is not None and result.structured_content["error"]


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("memory_remember", {"content": "Forged.", "source": {"kind": "manual"}}, "invalid"),
        ("memory_remember", {"content": "api_key = sk-proj-abcdefghijklmnopqrstuv"}, "secret"),
        ("memory_update", {"id": "x", "content": "y", "expected_revision": "z"}, "invalid"),
        (
            "memory_forget",
            {"id": "0" * 8 + "-0000-0000-0000-" + "0" * 12, "expected_revision": "a" * 64},
            "conflict",
        ),
    ],
)
async def test_write_failures_are_errors_with_the_core_text_and_no_structured_content(
    workspace: Path, name: str, arguments: dict[str, Any], code: str
) -> None:
    session = MemorySession(workspace, "listing")
    core = MemoryToolset(session).call(name, arguments)
    async with Client(build_server(session), mode="legacy") as client:
        result = await client.call_tool(name, arguments)
    assert result.is_error is True
    assert result.structured_content is None
    assert text_of(result) == core.text
    assert json.loads(text_of(result)) == core.structured
    assert json.loads(text_of(result))["code"] == code
    assert not (workspace / "memory" / "records.md").exists()


async def test_an_unknown_tool_is_an_error_result(workspace: Path) -> None:
    session = MemorySession(workspace, "listing", "read")
    async with Client(build_server(session), mode="legacy") as client:
        result = await client.call_tool("memory_remember", {"content": "Nope."})
    assert result.is_error is True
    assert "Unknown tool" in text_of(result)


async def test_the_direct_in_process_mode_gives_the_same_results(workspace: Path) -> None:
    session = MemorySession(workspace, "listing")
    calls = [("memory_search", {"query": "saffron"}), ("memory_get", {"file_path": "notes.md"})]
    seen: dict[str, list[tuple[str, Any]]] = {}
    for mode in ("legacy", "auto"):
        async with Client(build_server(session), mode=mode) as client:
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
        seen[mode] = [(text_of(r), r.structured_content) for r in results]
    assert seen["legacy"] == seen["auto"]


def test_write_only_needs_write_access(workspace: Path) -> None:
    with pytest.raises(ValueError, match="read_write"):
        build_server(MemorySession(workspace, "listing", "read"), write_only=True)
