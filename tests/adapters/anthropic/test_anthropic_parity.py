"""The parity kit over the Anthropic adapter, and the memory tool's files read everywhere.

- ``TestAnthropicParity``: every parity case through memquill's six tools as the SDK's function
  tools (:class:`memquill_anthropic.AnthropicHarness`), compared with the core.
- Files written by the memory tool are ordinary named facts: ``memory_search``,
  ``memory_get`` and ``memory_recent`` through every installed adapter (the core, LangChain,
  LlamaIndex, MCP in-process and over stdio, and this one) answer the same text, normalised for
  ids and revisions, and it shows the file's key and text; an edit through the memory tool is
  what the next search finds, and a deleted file is found by none.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.adapters.anthropic.anthropic_helpers import answer, memquill_tool

from memquill import MemorySession
from memquill.index._location import INDEX_DIR_ENV
from memquill.plugins import get_plugin_manager, plugin_report
from memquill.testing import ParitySuite
from memquill.testing._demo import core_spec
from memquill.testing._runner import CoreHarness, HarnessFactory, Normalizer
from memquill_anthropic import AnthropicHarness


class TestAnthropicParity(ParitySuite):
    """Each call through ``BetaFunctionTool.call``, a ``ToolError`` read as the runner does."""

    def harness_factory(self) -> HarnessFactory:
        return AnthropicHarness


def installed() -> dict[str, HarnessFactory]:
    specs = [
        core_spec(),
        *(entry.adapter for entry in plugin_report(get_plugin_manager()).adapters),
    ]
    return {spec.name: spec.open for spec in specs}


def read_everywhere(workspace: Path, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Each installed adapter's answers (normalised text, error flag) to ``calls``."""
    seen: dict[str, Any] = {}
    for name, factory in installed().items():
        with contextlib.ExitStack() as own_index:
            if name == "mcp-stdio":
                # A subprocess the SDK stops at close (terminated after a short grace on a busy
                # host) keeps an index of its own: the adapters read after it must not meet an
                # index it left half-written.
                folder = own_index.enter_context(tempfile.TemporaryDirectory())
                own_index.enter_context(_environment(INDEX_DIR_ENV, folder))
            harness = factory(MemorySession(workspace, "reader", access="read"))
            try:
                normalizer = Normalizer()
                seen[name] = [
                    (normalizer.text((result := harness.call(tool, args)).text), result.is_error)
                    for tool, args in calls
                ]
            finally:
                harness.close()
    return seen


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    previous = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous


def test_every_adapter_is_installed_here() -> None:
    assert set(installed()) == {
        "core",
        "adk",
        "anthropic",
        "langchain",
        "llamaindex",
        "mcp",
        "mcp-stdio",
        "openai-agents",
        "pydantic-ai",
    }


@pytest.mark.slow
def test_files_of_the_memory_tool_read_the_same_through_every_adapter(tmp_path: Path) -> None:
    tool = memquill_tool(tmp_path)
    for path, text in [
        ("/memories/preferences.md", "# Preferences\n- Coffee: oat milk, no sugar\n"),
        ("/memories/projects/atlas.md", "# Atlas\nShips on Fridays after the review.\n"),
    ]:
        assert answer(tool, {"command": "create", "path": path, "file_text": text})[0] == "ok"
    edit = {"command": "str_replace", "path": "/memories/preferences.md"}
    assert answer(tool, {**edit, "old_str": "no sugar", "new_str": "one sugar"})[0] == "ok"
    hit = CoreHarness(MemorySession(tmp_path, "reader")).call("memory_search", {"query": "coffee"})
    record_path = (hit.structured or {})["hits"][0]["path"]
    calls = [
        ("memory_search", {"query": "coffee sugar"}),
        ("memory_search", {"query": "when does atlas ship"}),
        ("memory_get", {"file_path": record_path}),
        ("memory_recent", {}),
    ]
    seen = read_everywhere(tmp_path, calls)
    core = seen.pop("core")
    assert {name: answers for name, answers in seen.items() if answers != core} == {}
    (search, _), (atlas, _), (got, _), (recent, _) = core
    assert "key:preferences.md" in search and "- Coffee: oat milk, one sugar" in search
    assert "no sugar" not in search
    assert "key:projects/atlas.md" in atlas and "Ships on Fridays" in atlas
    assert "# Preferences\n- Coffee: oat milk, one sugar" in got
    assert "key:projects/atlas.md" in recent and "key:preferences.md" in recent
    # Deleted through the memory tool: found by no adapter.
    assert answer(tool, {"command": "delete", "path": "/memories/preferences.md"})[0] == "ok"
    after = read_everywhere(tmp_path, [("memory_search", {"query": "coffee sugar"})])
    assert {tuple(answers) for answers in after.values()} == {
        (("No matching memories found.", False),)
    }
