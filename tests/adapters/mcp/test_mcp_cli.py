"""``memquill-mcp`` as hosts run it: real subprocesses over stdio, and its usage errors."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import Implementation
from tests.adapters.mcp.mcp_helpers import START_CEILING, records, stdio_server, text_of

from memquill.errors import Messages
from memquill.plugins import get_plugin_manager, registered_adapters
from memquill.tools import SEARCH_PROMPT, WRITE_PROMPT
from memquill_mcp import server_command
from memquill_mcp.cli import main

READ_TOOLS = ["memory_search", "memory_get", "memory_recent"]
WRITE_TOOLS = ["memory_remember", "memory_update", "memory_forget"]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "memory.md").write_text("# Long-term memory\n\n- Deploys happen on Tuesdays.\n")
    return root


async def test_a_read_only_server_offers_no_write_tools(workspace: Path) -> None:
    async with Client(stdio_server(workspace, "--access", "read")) as client:
        assert client.instructions == SEARCH_PROMPT
        assert [tool.name for tool in (await client.list_tools()).tools] == READ_TOOLS
        refused = await client.call_tool("memory_remember", {"content": "Nope."})
        found = await client.call_tool("memory_search", {"query": "deploys"})
    assert refused.is_error is True and "Unknown tool" in text_of(refused)
    assert "memory.md" in text_of(found)
    assert records(workspace) is None


async def test_plan_mode_refuses_writes_and_changes_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan-mode"
    server = stdio_server(workspace, "--session-id", "host-7", "--plan-mode-file", str(plan))
    async with Client(server, mode="legacy") as client:
        saved = await client.call_tool("memory_remember", {"content": "Ship on Friday."})
        receipt = saved.structured_content
        assert receipt is not None and receipt["sourceSessionId"] == "host-7"
        before = records(workspace)

        plan.touch()  # the host switched to Plan mode after the tools were listed
        forget = {"id": receipt["recordId"], "expected_revision": receipt["recordRevision"]}
        refusals = [
            await client.call_tool("memory_forget", forget),
            await client.call_tool("memory_remember", {"content": "Another fact."}),
            await client.call_tool("memory_update", {**forget, "content": "Ship on Monday."}),
        ]
        still_found = await client.call_tool("memory_search", {"query": "ship friday"})
        assert records(workspace) == before

        plan.unlink()
        forgotten = await client.call_tool("memory_forget", forget)
    for refusal in refusals:
        assert refusal.is_error is True
        error = json.loads(text_of(refusal))
        assert (error["code"], error["message"]) == ("invalid", Messages.WRITE_UNAUTHORIZED)
    assert "Ship on Friday." in text_of(still_found)
    assert forgotten.is_error is False, text_of(forgotten)
    assert records(workspace) != before


async def test_read_and_write_servers_side_by_side(workspace: Path) -> None:
    reads = stdio_server(workspace, "--access", "read")
    writes = stdio_server(workspace, "--write-only", "--session-id", "host-1")
    async with Client(reads) as reader, Client(writes, mode="legacy") as writer:
        assert writer.server_info is not None and writer.server_info.name == "memquill-write"
        assert reader.server_info is not None and reader.server_info.name == "memquill"
        assert writer.instructions == WRITE_PROMPT
        assert [tool.name for tool in (await writer.list_tools()).tools] == WRITE_TOOLS
        assert [tool.name for tool in (await reader.list_tools()).tools] == READ_TOOLS
        saved = await writer.call_tool("memory_remember", {"content": "Standup is at 9:30."})
        found = await reader.call_tool("memory_search", {"query": "standup"})
    assert saved.structured_content is not None
    assert f"memory/records/{saved.structured_content['recordId']}.md" in text_of(found)


async def test_without_a_session_id_one_is_derived_per_connection(workspace: Path) -> None:
    seen: list[str] = []
    for _ in range(2):  # two processes: two connections
        client = Client(
            stdio_server(workspace),
            mode="legacy",
            client_info=Implementation(name="Claude Desktop", version="1.0"),
        )
        async with client:
            for content in ("First fact.", "Second fact."):
                result = await client.call_tool("memory_remember", {"content": content})
                assert result.structured_content is not None, text_of(result)
                seen.append(result.structured_content["sourceSessionId"])
    assert all(re.fullmatch(r"claude-desktop-[0-9a-f]{12}", value) for value in seen), seen
    assert seen[0] == seen[1] and seen[2] == seen[3]
    assert seen[0] != seen[2]


async def test_an_empty_session_id_means_no_trusted_session(workspace: Path) -> None:
    async with Client(stdio_server(workspace, "--session-id=")) as client:
        result = await client.call_tool("memory_remember", {"content": "Unattributed."})
    assert result.is_error is True
    assert json.loads(text_of(result))["message"] == Messages.NO_SESSION
    assert records(workspace) is None


def test_stdout_carries_only_json_rpc_even_with_debug_logging(
    workspace: Path, tmp_path: Path
) -> None:
    messages: list[dict[str, Any]] = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-pipe", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "memory_remember", "arguments": {"content": "Pipes are clean."}},
        },
    ]
    stderr_path = tmp_path / "stderr.log"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            [*server_command(), "--workspace", str(workspace), "--log-level", "DEBUG"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=_env(),
        )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        process.stdin.flush()
        lines: list[bytes] = []
        while len(lines) < 3:  # stdin stays open until every reply is in: EOF cancels calls
            ready, _, _ = select.select([process.stdout], [], [], START_CEILING)
            assert ready, "no reply from memquill-mcp"
            lines.append(process.stdout.readline())
        process.stdin.close()
        extra = process.stdout.read()  # everything else the server wrote before exiting
        assert process.wait(timeout=START_CEILING) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
    replies = [json.loads(line) for line in lines]
    assert extra == b""
    assert [reply.get("id") for reply in replies] == [1, 2, 3]
    assert all(reply["jsonrpc"] == "2.0" and "result" in reply for reply in replies), replies
    assert replies[2]["result"]["structuredContent"]["status"] == "saved"
    assert b"DEBUG" in stderr_path.read_bytes()  # the log went to stderr


def _env() -> dict[str, str]:
    return {**os.environ, "MEMQUILL_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--write-only", "--access", "read"], "--write-only needs --access read_write"),
        (["--transport", "http", "--host", "0.0.0.0"], "--allow-remote"),
        (["--transport", "http", "--host", "192.0.2.1", "--allow-remote"], "bearer token"),
        (["--testing-clock", "2026-01-01T00:00:00"], "UTC offset"),
    ],
)
def test_usage_errors_exit_2_and_explain(
    workspace: Path,
    tmp_path: Path,
    arguments: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMQUILL_WORKSPACE", raising=False)
    monkeypatch.delenv("MEMQUILL_MCP_TOKEN", raising=False)
    given = [argument.replace("{missing}", str(tmp_path / "missing")) for argument in arguments]
    if not given or given[0] != "--workspace":
        given = [*(["--workspace", str(workspace)] if arguments else []), *given]
    with pytest.raises(SystemExit) as exit_info:
        main(given)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_without_a_workspace_the_default_one_is_served_and_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memquill_mcp.cli import _workspace  # pyright: ignore[reportPrivateUsage]

    monkeypatch.delenv("MEMQUILL_WORKSPACE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    expected = tmp_path / "data" / "memquill" / "workspace"
    assert _workspace(None) == expected
    assert expected.is_dir()
    # The variable names a folder the person chose: it must exist, and is never created.
    chosen = tmp_path / "chosen"
    monkeypatch.setenv("MEMQUILL_WORKSPACE", str(chosen))
    with pytest.raises(ValueError, match=r"\(from \$MEMQUILL_WORKSPACE\) does not exist"):
        _workspace(None)
    assert not chosen.exists()
    chosen.mkdir()
    assert _workspace(None) == chosen
    monkeypatch.setenv("HOME", str(tmp_path))
    assert _workspace("~/chosen") == chosen  # as a shell would expand it


def test_the_console_script_reports_a_missing_workspace_coded_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [*server_command(), "--workspace", str(tmp_path / "missing")],
        capture_output=True,
        timeout=START_CEILING,
        check=False,
        env=_env(),
    )
    assert done.returncode == 11  # invalid, as for the memquill command
    assert done.stdout == b""
    assert done.stderr.startswith(b"error[invalid]: The workspace ")
    assert b"(from --workspace) does not exist. Create it first" in done.stderr


def test_the_plugin_registers_both_mcp_adapters() -> None:
    adapters = {spec.name: spec for spec in registered_adapters(get_plugin_manager())}
    assert adapters["mcp"].distribution == "memquill-mcp"
    assert adapters["mcp-stdio"].distribution == "memquill-mcp"
