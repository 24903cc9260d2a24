"""The folder-listing cache: unchanged folders are not listed again, and results never differ."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.core.query_helpers import make_unreadable, write

from memquill.query import _scan as scan_module
from memquill.query._scan import ScanResult, scan_workspace
from memquill.query._scanconfig import ScanConfig
from memquill.query._walk import DocumentCache, FolderListing


def summary(result: ScanResult) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    return [(d.path, d.content) for d in result.documents], result.warnings


def same_as_cold(root: Path, cache: DocumentCache) -> ScanResult:
    warm = scan_workspace(root, cache)
    assert summary(warm) == summary(scan_workspace(root))
    return warm


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every folder ``os.scandir`` lists, as a workspace-relative path (root: "")."""
    listed: list[str] = []
    real: Callable[[str], object] = os.scandir

    def counting(path: str) -> object:
        listed.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    yield listed


def test_unchanged_folders_are_not_listed_again(tmp_path: Path, listings: list[str]) -> None:
    write(tmp_path, "a.md", "alpha")
    write(tmp_path, "notes/b.md", "bravo")
    write(tmp_path, "notes/deep/c.md", "charlie")
    cache = DocumentCache(racy_seconds=0)
    first = scan_workspace(tmp_path, cache)
    assert len(listings) == 3 and cache.folders == 3
    listings.clear()
    second = scan_workspace(tmp_path, cache)
    assert listings == []
    assert all(a is b for a, b in zip(first.documents, second.documents, strict=True))
    write(tmp_path, "notes/b.md", "bravo, edited")  # a file edit leaves its folder unchanged
    assert [d.content for d in same_as_cold(tmp_path, cache).documents][1] == "bravo, edited"


def test_added_removed_and_renamed_entries_are_seen_at_once(tmp_path: Path) -> None:
    write(tmp_path, "notes/a.md", "alpha")
    cache = DocumentCache(racy_seconds=0)
    same_as_cold(tmp_path, cache)
    # Each change comes right after a scan, within the same second.
    write(tmp_path, "notes/b.md", "bravo")
    assert [d.path for d in same_as_cold(tmp_path, cache).documents] == [
        "notes/a.md",
        "notes/b.md",
    ]
    (tmp_path / "notes/a.md").rename(tmp_path / "notes/c.md")
    assert [d.path for d in same_as_cold(tmp_path, cache).documents] == [
        "notes/b.md",
        "notes/c.md",
    ]
    (tmp_path / "notes/b.md").unlink()
    (tmp_path / "notes/sub").mkdir()
    write(tmp_path, "notes/sub/d.md", "delta")
    assert [d.path for d in same_as_cold(tmp_path, cache).documents] == [
        "notes/c.md",
        "notes/sub/d.md",
    ]


def test_a_change_that_keeps_the_folder_mtime_is_still_seen(tmp_path: Path) -> None:
    # A coarse clock can give a folder the same mtime after a change; its ctime moves anyway.
    write(tmp_path, "notes/a.md", "alpha")
    folder = tmp_path / "notes"
    before = folder.stat()
    cache = DocumentCache(racy_seconds=0)
    same_as_cold(tmp_path, cache)
    write(tmp_path, "notes/b.md", "bravo")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert folder.stat().st_mtime_ns == before.st_mtime_ns
    assert len(same_as_cold(tmp_path, cache).documents) == 2


def test_folders_changed_just_now_are_not_cached(tmp_path: Path) -> None:
    write(tmp_path, "notes/a.md", "alpha")
    cache = DocumentCache()  # 2 s window: folders written this instant are listed every time
    scan_workspace(tmp_path, cache)
    assert cache.folders == 0
    listing = FolderListing(1, ("file",), ("a.md",), cacheable=False)
    settled = (1, 0, 1, 0, 1)
    relaxed = DocumentCache(racy_seconds=0)
    relaxed.put_listing("", settled, ScanConfig(), listing)
    assert relaxed.folders == 0  # a listing with a failed entry is never kept


def test_new_settings_are_honoured_with_a_warm_cache(tmp_path: Path) -> None:
    write(tmp_path, "drafts/a.md", "alpha")
    write(tmp_path, "notes/b.md", "bravo")
    cache = DocumentCache(racy_seconds=0)
    assert len(same_as_cold(tmp_path, cache).documents) == 2
    write(tmp_path, ".assistant/config.json", json.dumps({"ignore": ["drafts/**"]}))
    assert [d.path for d in same_as_cold(tmp_path, cache).documents] == ["notes/b.md"]
    write(tmp_path, ".assistant/config.json", json.dumps({"index": {"maxDepth": 0}}))
    assert same_as_cold(tmp_path, cache).documents == ()


def test_entry_budget_is_the_same_warm_and_cold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for index in range(6):
        write(tmp_path, f"a/n{index}.md", f"note {index}")
        write(tmp_path, f"b/n{index}.md", f"note {index}")
    write(tmp_path, "z.md", "last")
    warm = DocumentCache(racy_seconds=0)
    full = scan_module.ENTRY_LIMIT
    for limit in range(16):
        monkeypatch.setattr(scan_module, "ENTRY_LIMIT", full)
        scan_workspace(tmp_path, warm)  # every folder cached under the full budget
        assert warm.folders == 3
        monkeypatch.setattr(scan_module, "ENTRY_LIMIT", limit)
        result = same_as_cold(tmp_path, warm)
        stopped = any("-entry limit" in warning for warning in result.warnings)
        assert stopped == (limit < 15), limit


def test_unreadable_files_are_skipped_on_every_warm_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "notes/a.md", "alpha")
    write(tmp_path, "notes/b.md", "alpha bravo")
    make_unreadable(monkeypatch, "a.md")
    cache = DocumentCache(racy_seconds=0)
    for _ in range(2):
        result = same_as_cold(tmp_path, cache)
        assert result.warnings == ("Skipped notes/a.md: Memory source is not readable.",)
        assert [d.path for d in result.documents] == ["notes/b.md"]
