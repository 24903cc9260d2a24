"""A hard link is refused by every read tool unless the user opts in (issue 21, Why 10).

``ln ~/.ssh/config notes/x.md`` gives a file from outside the workspace a name inside it, and
no path check can see it. ``get``, ``search`` (full scan and index, in memory and persistent),
``recent`` and the index refuse a note whose link count is above one;
``MEMQUILL_ALLOW_HARD_LINKS=1`` lets them serve it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.core.query_helpers import assert_no_leak, engine, write

from memquill import MemoryToolset, open_session
from memquill.errors import Messages
from memquill.paths import HARD_LINKS_ENV

SECRET = "OUTSIDE-THE-WORKSPACE-7731"
SKIPPED = f"Skipped linked.md: {Messages.HARD_LINK}"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(HARD_LINKS_ENV, raising=False)
    monkeypatch.setenv("MEMQUILL_INDEX_DIR", str(tmp_path / "cache"))
    root = tmp_path / "ws"
    root.mkdir()
    write(root, "own.md", "quokka notes of my own\n")
    outside = write(tmp_path, "private/config.md", f"quokka {SECRET}\n")
    os.link(outside, root / "linked.md")
    return root


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_get_and_search_refuse_a_hard_linked_note(workspace: Path, indexed: bool) -> None:
    query = engine(workspace, indexed=indexed)
    response = query.get("linked.md")
    assert response.text == f"Memory read failed: {Messages.HARD_LINK}"
    assert response.result.error_code == "access_denied"
    found = query.search("quokka")
    assert found.text.startswith(SKIPPED + "\n\n1. [own.md:1]"), found.text
    assert_no_leak(found.text, workspace, SECRET)


def test_recent_refuses_a_hard_linked_long_term_note(workspace: Path, tmp_path: Path) -> None:
    os.link(tmp_path / "private" / "config.md", workspace / "memory.md")
    shown = engine(workspace).recent()
    assert f"Skipped memory.md: {Messages.HARD_LINK}" in shown.text
    assert_no_leak(shown.text, workspace, SECRET)


def test_a_link_planted_while_a_session_runs_is_refused_by_its_persistent_index(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "linked.md").unlink()
    tools = MemoryToolset(open_session(workspace, access="read"))
    first = tools.call("memory_search", {"query": "quokka"}).text
    assert "[own.md:1]" in first and SKIPPED not in first
    # The index (and its change watcher) is live now; a link appears inside the workspace.
    os.link(tmp_path / "private" / "config.md", workspace / "linked.md")
    again = tools.call("memory_search", {"query": "quokka"}).text
    assert again.startswith(SKIPPED + "\n\n1. [own.md:1]"), again
    assert_no_leak(again, workspace, SECRET)
    assert any((tmp_path / "cache").rglob("*.sqlite3")), "the search went through the index"
    got = tools.call("memory_get", {"file_path": "linked.md"})
    assert got.is_error and got.text == f"Memory read failed: {Messages.HARD_LINK}"


@pytest.mark.parametrize("indexed", [False, True], ids=["scan", "index"])
def test_the_user_can_opt_in(
    workspace: Path, indexed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HARD_LINKS_ENV, "1")
    query = engine(workspace, indexed=indexed)
    assert query.get("linked.md").ok
    found = query.search("quokka").text
    assert "[linked.md:1]" in found and SKIPPED not in found
    monkeypatch.setenv(HARD_LINKS_ENV, "yes")  # only "1" opts in
    assert not query.get("linked.md").ok


def test_a_single_link_note_is_unaffected(workspace: Path) -> None:
    assert (workspace / "own.md").stat().st_nlink == 1
    assert engine(workspace).get("own.md").ok
