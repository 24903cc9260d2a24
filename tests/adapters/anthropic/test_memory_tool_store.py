"""What memquill adds under the memory tool: files are facts, refusals change nothing, a deleted
file never comes back, directories move and go in one write, and sessions decide who writes.

Every refusal is checked against the disk: the workspace's files are byte-identical after it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from tests.adapters.anthropic.anthropic_helpers import answer, memquill_tool
from tests.core.store_helpers import tree

from memquill import MemorySession, RecordStore, WriteSource, remember
from memquill.store._results import Candidate
from memquill_anthropic import MemquillAsyncMemoryTool, MemquillMemoryTool


class Clock:
    """A clock that moves a second at every reading, so two writes never share a stamp."""

    def __init__(self) -> None:
        self.moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment


def run(tool: MemquillMemoryTool, command: str, **arguments: Any) -> str:
    kind, text = answer(tool, {"command": command, **arguments})
    assert kind == "ok", text
    return text


def refused(tool: MemquillMemoryTool, workspace: Path, command: str, **arguments: Any) -> str:
    """The command's error text; nothing in the workspace changed."""
    before = tree(workspace)
    kind, text = answer(tool, {"command": command, **arguments})
    assert kind == "error", text
    assert tree(workspace) == before
    return text


FORGOTTEN = (
    "memquill will not create /memories/t.md again: a file with exactly this text was deleted "
    "before, and a deleted memory never comes back through a tool or a conversation. If the "
    "user wants it again now, create it with different text (for example, add the date)."
)


def test_a_deleted_file_never_comes_back_from_a_repeated_command(tmp_path: Path) -> None:
    tool = memquill_tool(tmp_path)
    create = {"path": "/memories/t.md", "file_text": "tea, no sugar\n"}
    run(tool, "create", **create)
    run(tool, "str_replace", path="/memories/t.md", old_str="tea", new_str="green tea")
    run(tool, "delete", path="/memories/t.md")
    # The same create again (a retried or replayed call), in this conversation: refused.
    assert refused(tool, tmp_path, "create", **create) == FORGOTTEN
    # Retried edits and moves of the deleted file find nothing.
    edit = {"path": "/memories/t.md", "old_str": "tea", "new_str": "coffee"}
    assert answer(tool, {"command": "str_replace", **edit}) == (
        "error",
        "The path /memories/t.md does not exist. Please provide a valid path.",
    )
    assert (
        answer(
            tool,
            {"command": "insert", "path": "/memories/t.md", "insert_line": 0, "insert_text": "x"},
        )[0]
        == "error"
    )
    moved = {"command": "rename", "old_path": "/memories/t.md", "new_path": "/memories/u.md"}
    assert answer(tool, moved) == ("error", "The path /memories/t.md does not exist")
    # Its text is gone from the disk; the tombstones stay.
    assert "tea" not in (tmp_path / "memory" / "records.md").read_text("utf-8")
    # Another conversation may not bring the forgotten words back either (their fingerprint
    # stays in the tombstone); other text, or a person, may.
    other = memquill_tool(tmp_path, session_id="chat-43")
    assert refused(other, tmp_path, "create", **create) == FORGOTTEN
    run(tool, "create", path="/memories/t.md", file_text="tea, no sugar (again, 2026-12-01)\n")
    run(tool, "delete", path="/memories/t.md")
    person = MemorySession(tmp_path, None)
    remember(person, "tea, no sugar\n", source=WriteSource.manual(), key="t.md")
    assert run(tool, "view", path="/memories/t.md").endswith("     1\ttea, no sugar\n     2\t")


def test_a_file_moved_away_or_edited_may_be_created_again_and_still_never_comes_back(
    tmp_path: Path,
) -> None:
    tool = memquill_tool(tmp_path)
    create = {"path": "/memories/r.md", "file_text": "rooibos"}
    for copy in ("/memories/s1.md", "/memories/s2.md"):
        run(tool, "create", **create)
        run(tool, "rename", old_path="/memories/r.md", new_path=copy)
    run(tool, "create", **create)  # a third time: each earlier one moved away, none deleted
    keys = [r.key or "" for r in RecordStore(tmp_path).snapshot().keyed()]
    assert sorted(keys) == ["r.md", "s1.md", "s2.md"]
    run(tool, "delete", path="/memories/r.md")
    text = refused(tool, tmp_path, "create", **create)
    assert text.startswith("memquill will not create /memories/r.md again")
    # Deleting a copy that was moved away blocks nothing more: r.md is free and stays blocked.
    run(tool, "delete", path="/memories/s1.md")
    assert answer(tool, {"command": "create", **create})[0] == "error"
    assert run(tool, "view", path="/memories/s2.md").endswith("     1\trooibos")


def test_refusals_change_nothing_on_disk(tmp_path: Path) -> None:
    tool = memquill_tool(tmp_path)
    run(tool, "create", path="/memories/ops.md", file_text="The deploy key is in the vault.\n")
    secret = "password = hunter2hunter2"
    refused(tool, tmp_path, "create", path="/memories/k.md", file_text=secret)
    refused(
        tool,
        tmp_path,
        "str_replace",
        path="/memories/ops.md",
        old_str="vault",
        new_str=f"vault: {secret}",
    )
    refused(tool, tmp_path, "insert", path="/memories/ops.md", insert_line=0, insert_text=secret)
    text = refused(tool, tmp_path, "create", path="/memories/big.md", file_text="x" * 16_001)
    assert "16,001 characters" in text and "at most 16,000" in text
    refused(
        tool, tmp_path, "insert", path="/memories/ops.md", insert_line=1, insert_text="x" * 16_000
    )
    refused(tool, tmp_path, "create", path="/memories/crlf.md", file_text="a\r\nb\r\n")
    refused(
        tool,
        tmp_path,
        "insert",
        path="/memories/ops.md",
        insert_line=0,
        insert_text="windows line\r",
    )
    refused(tool, tmp_path, "create", path="/memories/nul.md", file_text="a\x00b")
    refused(tool, tmp_path, "create", path="/memories/ops.md/x", file_text="x")
    refused(tool, tmp_path, "delete", path="/memories")
    refused(tool, tmp_path, "rename", old_path="/memories/ops.md", new_path="/memories/ops.md")


def test_an_edit_that_changes_nothing_writes_nothing(tmp_path: Path) -> None:
    tool = memquill_tool(tmp_path)
    run(tool, "create", path="/memories/t.md", file_text="tea, no sugar\n")
    before = tree(tmp_path)
    text = run(tool, "str_replace", path="/memories/t.md", old_str="tea", new_str="tea")
    assert text.startswith("The memory file has been edited.")  # the reference's answer
    assert tree(tmp_path) == before  # no new version: records.md is byte-identical
    assert len(RecordStore(tmp_path).snapshot().records) == 1


def test_directories_are_deleted_and_moved_in_one_write(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-42", now=Clock())
    tool = MemquillMemoryTool(session)
    for name in ("a.md", "sub/b.md", "sub/deeper/c.md", ".hidden.md"):
        run(tool, "create", path=f"/memories/notes/{name}", file_text=f"{name}\n")
    run(tool, "create", path="/memories/other.md", file_text="other\n")
    before = RecordStore(tmp_path).snapshot()
    run(tool, "rename", old_path="/memories/notes", new_path="/memories/archive/2026")
    moved = RecordStore(tmp_path).snapshot()
    files = {r.key or "": r for r in moved.keyed()}
    assert sorted(files) == [
        "archive/2026/.hidden.md",
        "archive/2026/a.md",
        "archive/2026/sub/b.md",
        "archive/2026/sub/deeper/c.md",
        "other.md",
    ]
    # Each moved file is the same fact, with the same text, in a version of one write.
    stamps = {files[f"archive/2026/{name}"].updated_at for name in ("a.md", ".hidden.md")}
    new_versions = [r for r in moved.records if r.key and r.key.startswith("archive/")]
    assert len({r.updated_at for r in new_versions}) == 1 and stamps <= {new_versions[0].updated_at}
    for old in before.keyed("notes/"):
        current = moved.current(old)
        assert current is not None and current.content == old.content
    run(tool, "delete", path="/memories/archive")
    gone = RecordStore(tmp_path).snapshot()
    assert [r.key for r in gone.keyed()] == ["other.md"]
    tombstones = [r for r in gone.records if r.status == "revoked"]
    assert len(tombstones) == 8 and len({r.updated_at for r in tombstones}) == 1  # one write
    listing = run(tool, "view", path="/memories")
    assert listing.splitlines()[1:] == ["6B\t/memories", "6B\t/memories/other.md"]


def test_keys_from_other_surfaces_are_files_and_only_escaped_paths_show(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    manual = {"kind": "manual"}
    store.save(
        [
            Candidate("black, no sugar", manual, "1", "prefs/coffee"),
            Candidate("the prefs folder's own note", manual, "2", "prefs"),
            Candidate("an escaped slash", manual, "3", "prefs/a%2Fb"),
            Candidate("an escaped letter", manual, "4", "prefs/%41"),
            Candidate("no key at all", manual, "5"),
            Candidate("spaces", manual, "6", "my%20notes.md"),
        ]
    )
    tool = memquill_tool(tmp_path)
    listing = run(tool, "view", path="/memories").splitlines()[1:]
    assert listing == [
        "48B\t/memories",
        "6B\t/memories/my notes.md",
        "27B\t/memories/prefs",
        "15B\t/memories/prefs/",
        "15B\t/memories/prefs/coffee",
    ]
    assert run(tool, "view", path="/memories/prefs").endswith("     1\tthe prefs folder's own note")
    assert run(tool, "view", path="/memories/my notes.md").endswith("     1\tspaces")
    missing = "The path /memories/prefs/A does not exist. Please provide a valid path."
    assert answer(tool, {"command": "view", "path": "/memories/prefs/A"}) == ("error", missing)
    # Deleting the path forgets the file there and the files below it, nothing else.
    run(tool, "delete", path="/memories/prefs")
    left = sorted(r.key or "" for r in RecordStore(tmp_path).snapshot().keyed())
    assert left == ["my%20notes.md", "prefs/%41", "prefs/a%2Fb"]


def test_clear_all_memory_forgets_every_file_and_nothing_else(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    store.save([Candidate("a fact without a key", {"kind": "manual"}, "plain")])
    tool = memquill_tool(tmp_path)
    run(tool, "create", path="/memories/a.md", file_text="a")
    run(tool, "create", path="/memories/d/b.md", file_text="b")
    assert tool.clear_all_memory() == "All memory cleared"
    assert tool.clear_all_memory() == "All memory cleared"
    snapshot = RecordStore(tmp_path).snapshot()
    assert [r.content for r in snapshot.records if r.status == "active"] == ["a fact without a key"]


@pytest.mark.parametrize("access", ["read", "no session id", "plan mode"])
def test_a_session_that_may_not_write_views_but_never_writes(access: str, tmp_path: Path) -> None:
    run(memquill_tool(tmp_path), "create", path="/memories/a.md", file_text="a\n")
    if access == "read":
        session = MemorySession(tmp_path, "chat-42", access="read")
        reason = "Memory write permission or workspace scope is no longer authorized."
    elif access == "plan mode":
        session = MemorySession(tmp_path, "chat-42", authorize_write=lambda: False)
        reason = "Memory write permission or workspace scope is no longer authorized."
    else:
        session = MemorySession(tmp_path, None)
        reason = "Memory writes require a trusted source session."
    tool = MemquillMemoryTool(session)
    assert run(tool, "view", path="/memories/a.md").endswith("     1\ta\n     2\t")
    for command, arguments in [
        ("create", {"path": "/memories/b.md", "file_text": "b"}),
        ("str_replace", {"path": "/memories/a.md", "old_str": "a", "new_str": "z"}),
        ("insert", {"path": "/memories/a.md", "insert_line": 0, "insert_text": "z"}),
        ("delete", {"path": "/memories/a.md"}),
        ("rename", {"old_path": "/memories/a.md", "new_path": "/memories/z.md"}),
    ]:
        text = refused(tool, tmp_path, command, **arguments)
        where = arguments.get("path") or arguments["old_path"]
        assert text == f"memquill could not apply the command to {where}: {reason}"


@pytest.mark.parametrize(
    ("tool_class", "sdk_class"),
    [
        (MemquillMemoryTool, BetaAbstractMemoryTool),
        (MemquillAsyncMemoryTool, BetaAsyncAbstractMemoryTool),
    ],
)
def test_from_workspace_opens_a_plugin_aware_session(
    tmp_path: Path, tool_class: type[MemquillMemoryTool | MemquillAsyncMemoryTool], sdk_class: type
) -> None:
    tool = tool_class.from_workspace(tmp_path, session_id="chat-42", access="read")
    assert isinstance(tool, tool_class) and isinstance(tool, sdk_class)
    assert (tool.session.workspace, tool.session.session_id) == (tmp_path, "chat-42")
    assert tool.session.access == "read"
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}
    cached = tool_class.from_workspace(tmp_path, "chat-42", cache_control={"type": "ephemeral"})
    assert cached.to_dict().get("cache_control") == {"type": "ephemeral"}
    with pytest.raises(ValueError, match="access"):
        tool_class.from_workspace(
            tmp_path,
            "chat-42",
            access="write",  # pyright: ignore[reportArgumentType]  (not an access, on purpose)
        )
