"""The whole parity suite over MCP, twice: in-process JSON-RPC, and a real stdio subprocess."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from tests.conftest import Server

from memquill import open_session
from memquill.index._location import INDEX_DIR_ENV, index_path
from memquill.paths import user_cache_dir
from memquill.testing import ParitySuite
from memquill.testing._cases import load_cases
from memquill.testing._runner import CoreHarness, HarnessFactory, assert_outcomes, run_case
from memquill_mcp import McpClientHarness, McpStdioHarness


class TestMcpInProcessParity(ParitySuite):
    """``Client(server, mode="legacy")``: every call is a JSON-RPC message through the SDK."""

    def harness_factory(self) -> HarnessFactory:
        return McpClientHarness


class TestMcpStdioParity(ParitySuite):
    """A ``memquill-mcp`` subprocess per case, reproducing the session from its command line."""

    def harness_factory(self) -> HarnessFactory:
        return McpStdioHarness


def test_the_stdio_harness_keeps_its_index_out_of_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK passes a child only HOME, PATH and a few more: the harness passes the index
    folder on, or the subprocess would build its index in the user's cache folder."""
    root = tmp_path / "workspace"
    (root / "memory").mkdir(parents=True)
    (root / "memory.md").write_text("The harbour opens at dawn.\n", encoding="utf-8")
    folder = tmp_path / "indexes"
    monkeypatch.setenv(INDEX_DIR_ENV, str(folder))
    session = open_session(root)
    harness = McpStdioHarness(session)
    try:
        result = harness.call("memory_search", {"query": "harbour"})
    finally:
        harness.close()
    assert "harbour" in result.text
    canonical = root.resolve()
    assert index_path(canonical, folder).exists()
    assert not index_path(canonical, user_cache_dir() / "memquill" / "index").exists()


def test_the_stdio_harness_serves_the_sessions_database_store(
    postgres_server: Server, tmp_path: Path
) -> None:
    """The subprocess keeps the records where the session does: in the database, not in the
    workspace's file, with the file store's results."""
    (case,) = [case for case in load_cases() if case.id == "write-lifecycle"]
    location = f"{postgres_server.url}#workspace=parity-{uuid.uuid4()}"
    ours = run_case(case, McpStdioHarness, tmp_path / "mcp", store=location)
    assert not (tmp_path / "mcp" / "memory" / "records.md").exists()
    assert_outcomes(case, ours, run_case(case, CoreHarness, tmp_path / "core", store="file"))
