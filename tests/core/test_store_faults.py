"""Operating-system faults inside a write: wrapped as ``storage``, old file intact, no leftovers.

The tests run as any user (root ignores permissions), so faults are injected where the store
calls the operating system.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import portalocker
import pytest
from tests.core.store_helpers import expect_unchanged, manual, raw, records_path, tree

import memquill
from memquill import RecordStore
from memquill.errors import Messages
from memquill.foundation.atomic import write_new
from memquill.store import _transaction


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def store(workspace: Path) -> RecordStore:
    store = RecordStore(workspace, lock_timeout=0)
    store.save([manual("the old fact", "old")])
    return store


def no_staging_files(workspace: Path) -> bool:
    return not list((workspace / "memory").glob(".records-*.tmp"))


def test_a_full_disk_while_staging_changes_nothing(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole-file way a correction or a forget takes (a save into a file appends).
    monkeypatch.setattr(_transaction.Draft, "rewritten", True)

    def half_written(path: Path, data: bytes, **_: object) -> None:
        path.write_bytes(data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("memquill.foundation.atomic.write_new", half_written)
    expect_unchanged(workspace, "storage", Messages.SAVE_FAILED, store.save, [manual("new")])
    assert no_staging_files(workspace)
    monkeypatch.undo()
    assert store.save([manual("new")]).status == "saved"  # the lock was released


def test_a_failed_rename_leaves_the_old_file(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole-file way a correction or a forget takes (a save into a file appends).
    monkeypatch.setattr(_transaction.Draft, "rewritten", True)

    def refuse(src: object, dst: object) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", refuse)
    expect_unchanged(workspace, "storage", Messages.SAVE_FAILED, store.save, [manual("new")])
    assert no_staging_files(workspace)


def test_an_edit_made_while_saving_is_never_overwritten(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The whole-file way a correction or a forget takes (a save into a file appends).
    monkeypatch.setattr(_transaction.Draft, "rewritten", True)
    real_write = write_new
    edited = raw(workspace).replace(b"the old fact", b"the OLD fact")

    def write_then_edit(path: Path, data: bytes, **options: int | None) -> None:
        real_write(path, data, **options)
        # An editor or sync tool, which does not take the writer lock, saves meanwhile.
        records_path(workspace).write_bytes(edited)

    monkeypatch.setattr("memquill.foundation.atomic.write_new", write_then_edit)
    before = store.snapshot().revision
    with pytest.raises(memquill.ConflictError) as info:
        store.save([manual("new")], before)
    assert info.value.message == Messages.CHANGED_WHILE_SAVING
    assert raw(workspace) == edited
    assert no_staging_files(workspace)


def test_an_unreadable_file_is_a_read_failure(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(file: Path, limit: int = 0) -> bytes:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr("memquill.store._transaction.read_bounded", unreadable)
    monkeypatch.setattr("memquill.store._transaction.read_signed", unreadable)
    # A file whose permissions changed has a new change time: the store reads it again.
    monkeypatch.setattr("memquill.store._transaction.file_signature", lambda _: None)
    expect_unchanged(workspace, "storage", Messages.READ_FAILED, store.snapshot)
    expect_unchanged(workspace, "storage", Messages.SAVE_FAILED, store.save, [manual("new")])


def test_a_memory_folder_that_cannot_be_created_is_unavailable(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "mkdir", refuse)  # memory/ is made owner-only with os.mkdir
    store = RecordStore(workspace)
    expect_unchanged(workspace, "storage", Messages.UNAVAILABLE, store.save, [manual("x")])
    assert tree(workspace) == {}


def test_preflight_reports_a_folder_it_cannot_write(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_access(path: object, mode: int) -> bool:
        return False

    monkeypatch.setattr(os, "access", no_access)
    expect_unchanged(workspace, "storage", Messages.PREFLIGHT_UNAVAILABLE, store.preflight)


def test_a_lock_that_cannot_be_released_is_reported_and_still_freed(
    workspace: Path, store: RecordStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stuck(fd: object) -> None:
        raise portalocker.LockException("cannot unlock")

    monkeypatch.setattr(portalocker, "unlock", stuck)
    with pytest.raises(memquill.BusyError) as info:
        store.save([manual("written anyway", "w")])
    assert info.value.message == Messages.LOCK_RELEASE
    monkeypatch.undo()
    # The write itself completed; closing the descriptor freed the lock.
    assert [r.content for r in store.snapshot().records] == ["the old fact", "written anyway"]
    assert store.save([manual("written anyway", "w")]).status == "duplicate"
    assert os.path.exists(workspace / "memory" / ".records-lock")
