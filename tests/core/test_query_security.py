"""Spec 12.4 and the path attacks: nothing private or outside is ever served or named."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.query_helpers import assert_no_leak, engine, remember, write

from memquill.store._store import RecordStore

SECRET = "TOPSECRET-4711"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    sibling = tmp_path / "work-other"
    sibling.mkdir()
    write(sibling, "x.md", SECRET)
    write(tmp_path, "outside.md", SECRET)
    write(root, ".assistant/state.md", SECRET)
    write(root, ".env", f"TOKEN={SECRET}")
    write(root, "note.md", "ordinary note")
    (root / "escape.md").symlink_to(tmp_path / "outside.md")
    (root / "private-link.md").symlink_to(root / ".assistant" / "state.md")
    (root / "broken.md").symlink_to(tmp_path / "nowhere" / "gone.md")
    return root


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../x", "Access denied: path is outside workspace."),
        ("../work-other/x.md", "Access denied: path is outside workspace."),
        ("notes/../../outside.md", "Access denied: path is outside workspace."),
        ("/etc/passwd", "Access denied: use a workspace-relative path."),
        ("C:\\x", "Access denied: use a workspace-relative path."),
        ("\\\\server\\x", "Access denied: use a workspace-relative path."),
        ("note.md\0", "Access denied: use a workspace-relative path."),
        ("escape.md", "Access denied: path resolves outside workspace (symlink)."),
        ("private-link.md", "Access denied: internal memory history is not query content."),
        (".assistant/state.md", "Access denied: internal memory history is not query content."),
        (".env", "Access denied: files that usually hold credentials are not query content."),
        ("memory/records.md", "Access denied: internal memory history is not query content."),
        ("./memory/records.md", "Access denied: internal memory history is not query content."),
        ("memory/.records-lock", "Access denied: internal memory history is not query content."),
        ("broken.md", "Memory source not found."),
        ("missing.md", "Memory source not found."),
    ],
)
def test_get_refuses_without_content_or_root(workspace: Path, path: str, message: str) -> None:
    response = engine(workspace).get(path)
    assert response.text == f"Memory read failed: {message}"
    assert not response.ok and response.result.content == ""
    assert_no_leak(response.text, workspace, SECRET, str(workspace.parent))


def test_absolute_path_inside_the_workspace_is_still_refused(workspace: Path) -> None:
    response = engine(workspace).get(str(workspace / "note.md"))
    assert response.text == "Memory read failed: Access denied: use a workspace-relative path."


def test_superseded_and_revoked_projections_are_denied(tmp_path: Path) -> None:
    saved = remember(tmp_path, "first version")
    first = saved.record_id
    assert first is not None
    store = RecordStore(tmp_path)
    corrected = store.correct(first, "second version", saved.revision)
    second = corrected.record_ids[0]
    assert second is not None
    query = engine(tmp_path)
    denied = "Memory read failed: Access denied: internal memory history is not query content."
    assert query.get(f"memory/records/{first}.md").text == denied
    assert query.get(f"memory/records/{second}.md").ok
    store.revoke(second, corrected.revision)
    assert query.get(f"memory/records/{second}.md").text == denied
    assert query.get(f"memory/records/{second.upper()}.md").text == denied


def test_search_never_shows_private_or_outside_content(workspace: Path) -> None:
    remember(workspace, "managed marker fact")
    query = engine(workspace)
    for text in (query.search(SECRET).text, query.search("TOKEN").text, query.recent().text):
        assert_no_leak(text, workspace, SECRET)
    assert "<!-- memory-record" not in query.search("managed marker").text


def test_long_single_line_and_projection_read_fully_through_continuation(tmp_path: Path) -> None:
    line = "".join(chr(0x4E00 + (i % 500)) for i in range(10_000)) + "\U0001f600end"
    write(tmp_path, "long.md", line)
    record_text = "记忆" * 6_400
    saved = remember(tmp_path, record_text)
    query = engine(tmp_path)
    for path, expected in (
        (f"memory/records/{saved.record_id}.md", record_text),
        ("long.md", line),
    ):
        pieces: list[str] = []
        offset = 0
        offsets: list[int] = []
        while True:
            page = query.get(path, char_start=offset)
            assert page.ok
            pieces.append(page.result.content)
            offsets.append(offset)
            if page.result.next_char_start is None:
                break
            assert page.text.endswith(
                f"\n[...truncated; next_char_start={page.result.next_char_start}; keep the same "
                "file_path and line range...]"
            )
            offset = page.result.next_char_start
        assert "".join(pieces) == expected
        assert offsets == sorted(set(offsets))
    assert query.get("long.md", char_start=-1).text.startswith("Memory read failed: ")
    assert query.get("long.md", char_start=10**6).text.startswith("Memory read failed: ")
    past = query.get("long.md", char_start=500_000)
    assert past.text == "Source: long.md:1 (workspace-file)\n(empty file)"


def test_mixed_cjk_and_latin_queries(tmp_path: Path) -> None:
    write(tmp_path, "zh.md", "# 会议记录\n我们决定使用新的数据库。")
    write(tmp_path, "mixed.md", "部署 pipeline 已经完成")
    write(tmp_path, "en.md", "The database migration is done.")
    query = engine(tmp_path)
    assert query.search("数据库").result.hits[0].path == "zh.md"
    assert query.search("pipeline 部署").result.hits[0].path == "mixed.md"
    assert [h.path for h in query.search("会议").result.hits] == ["zh.md"]
