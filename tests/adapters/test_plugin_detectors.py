"""A plugin's secret detector guards every write path: CLI, toolset, LangChain, LlamaIndex, MCP,
and the Anthropic adapter (its function tools and Claude's memory tool).

A throwaway distribution registers a detector for ``hunter2-canary`` through the
``memquill_register_secret_detectors`` hook. Each surface opens its session the way a user's
code does (``memquill.open_session``, the adapters' ``from_workspace``, the two commands), so
each must refuse the content with ``secret`` and leave ``records.md`` byte-identical.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from langchain_core.messages import ToolCall, ToolMessage
from mcp import StdioServerParameters
from mcp.client import Client
from mcp.client.stdio import stdio_client
from tests.core.plugin_helpers import write_distribution

from memquill import MemoryToolset, open_session
from memquill_anthropic import MemquillMemoryTool, memory_tools
from memquill_langchain import MemquillToolkit
from memquill_llamaindex import MemquillToolSpec
from memquill_mcp import server_command

MEMQUILL = str(Path(sysconfig.get_path("scripts")) / "memquill")
CANARY = "the vault code is hunter2-canary, keep it"
CANARY_PLUGIN = """
import re

from memquill.plugins import RegexDetector
from memquill import hookimpl


@hookimpl
def memquill_register_secret_detectors(register):
    register(RegexDetector("canary", re.compile(r"hunter2-canary")))
"""
SEED = "The team deploys on Tuesdays."


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The canary plugin, installed for this process and for child processes."""
    folder = write_distribution(
        tmp_path / "site",
        {"memquill_tmp_canary": CANARY_PLUGIN},
        {"tmp-canary": "memquill_tmp_canary"},
        name="memquill-tmp-canary",
    )
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delenv("MEMQUILL_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    yield folder
    sys.modules.pop("memquill_tmp_canary", None)


@pytest.fixture
def workspace(tmp_path: Path, site: Path) -> Path:
    """A workspace that already holds one fact, so ``records.md`` exists to compare."""
    root = tmp_path / "notes"
    root.mkdir()
    seeded = MemoryToolset(open_session(root, "seed")).call("memory_remember", {"content": SEED})
    assert not seeded.is_error, seeded.text
    return root


def _records(root: Path) -> bytes:
    return (root / "memory" / "records.md").read_bytes()


def _child_env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMQUILL_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def _refused(text: str) -> None:
    error = json.loads(text)
    assert (error["type"], error["code"]) == ("memory_write_error", "secret"), text


def test_the_cli_refuses(workspace: Path, site: Path) -> None:
    before = _records(workspace)
    done = subprocess.run(
        [MEMQUILL, "--workspace", str(workspace), "remember", CANARY],
        capture_output=True,
        text=True,
        env=_child_env(site),
        timeout=60,
    )
    assert done.returncode == 12, done.stdout + done.stderr
    assert done.stderr.startswith("error[secret]: ")
    assert _records(workspace) == before


def test_the_toolset_refuses(workspace: Path) -> None:
    before = _records(workspace)
    result = MemoryToolset(open_session(workspace, "chat-1")).call(
        "memory_remember", {"content": CANARY}
    )
    assert result.is_error
    _refused(result.text)
    assert _records(workspace) == before


def test_the_langchain_tool_refuses(workspace: Path) -> None:
    before = _records(workspace)
    tools = {t.name: t for t in MemquillToolkit.from_workspace(workspace, "chat-1").get_tools()}
    call = ToolCall(name="memory_remember", args={"content": CANARY}, id="c1", type="tool_call")
    message = tools["memory_remember"].invoke(call)
    assert isinstance(message, ToolMessage) and message.status == "error"
    _refused(str(message.content))
    assert _records(workspace) == before


def test_the_llamaindex_tool_refuses(workspace: Path) -> None:
    before = _records(workspace)
    spec = MemquillToolSpec.from_workspace(workspace, "chat-1")
    tools = {tool.metadata.name: tool for tool in spec.to_tool_list()}
    output = tools["memory_remember"].call(content=CANARY)
    assert output.is_error
    _refused(output.content)
    assert _records(workspace) == before


def test_the_anthropic_function_tool_refuses(workspace: Path) -> None:
    before = _records(workspace)
    tool = MemquillMemoryTool.from_workspace(workspace, "chat-1")
    remember = {t.name: t for t in memory_tools(tool.session)}["memory_remember"]
    with pytest.raises(ToolError) as raised:
        remember.call({"content": CANARY})
    _refused(str(raised.value.content))
    assert _records(workspace) == before


def test_claudes_memory_tool_refuses(workspace: Path) -> None:
    before = _records(workspace)
    tool = MemquillMemoryTool.from_workspace(workspace, "chat-1")
    with pytest.raises(ToolError) as raised:
        tool.call({"command": "create", "path": "/memories/vault.md", "file_text": CANARY})
    assert str(raised.value.content).startswith(
        "memquill refused to write /memories/vault.md: the text holds credential material (canary)."
    )
    assert _records(workspace) == before


async def test_the_mcp_server_refuses(workspace: Path, site: Path) -> None:
    before = _records(workspace)
    command, *prefix = server_command()
    parameters = StdioServerParameters(
        command=command,
        args=[*prefix, f"--workspace={workspace}", "--session-id=chat-1"],
        env=_child_env(site),
    )
    async with Client(stdio_client(parameters), mode="legacy") as client:
        result = await client.call_tool("memory_remember", {"content": CANARY})
    assert result.is_error
    [content] = result.content
    assert content.type == "text"
    _refused(content.text)
    assert _records(workspace) == before


def test_without_the_plugin_the_same_content_is_saved(tmp_path: Path) -> None:
    # The canary is not a secret to the built-in detectors: the refusals above are the plugin's.
    result = MemoryToolset(open_session(tmp_path, "chat-1")).call(
        "memory_remember", {"content": CANARY}
    )
    assert not result.is_error, result.text
