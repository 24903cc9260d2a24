"""The writer lock: a kernel lock that dies with its holder, waits, and is never deleted."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import threading
import uuid
from pathlib import Path

import pytest
from tests.core.store_helpers import (
    HOLD_LOCK,
    children,
    expect_error,
    expect_unchanged,
    manual,
    raw,
)

from memquill import RecordStore, WriteResult
from memquill.errors import Messages
from memquill.store._lock import WriterLock, lock_holder, lock_is_held, machine_id


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def lock_path(workspace: Path) -> Path:
    return workspace / "memory" / ".records-lock"


def seed(workspace: Path) -> WriteResult:
    return RecordStore(workspace).save([manual("first fact", "a")])


def test_a_writer_leaves_diagnostics_and_never_deletes_the_lock(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("one")])
    path = lock_path(workspace)
    inode = path.stat().st_ino
    holder = json.loads(path.read_bytes())
    assert list(holder) == ["machineId", "pid", "nonce", "since"]
    assert holder["pid"] == os.getpid() and holder["machineId"] == machine_id()
    assert uuid.UUID(holder["nonce"]).version == 4
    assert path.stat().st_mode & 0o777 == 0o600
    store.save([manual("two")])
    assert path.stat().st_ino == inode
    assert json.loads(path.read_bytes())["nonce"] != holder["nonce"]
    assert not lock_is_held(path)


def test_a_held_lock_makes_every_writer_busy(workspace: Path) -> None:
    first = seed(workspace)
    (workspace / "memory" / ".records-stale.tmp").write_text("left by a crash")
    record = first.record_id or ""
    with WriterLock(lock_path(workspace), timeout=0):
        for timeout in (0, 0.05):
            store = RecordStore(workspace, lock_timeout=timeout)
            busy = ("busy", Messages.LOCK_HELD)
            expect_unchanged(workspace, *busy, store.save, [manual("blocked")])
            expect_unchanged(workspace, *busy, store.correct, record, "x", first.revision)
            expect_unchanged(workspace, *busy, store.revoke, record, first.revision)
            expect_unchanged(workspace, *busy, store.compact, first.revision)
            expect_unchanged(workspace, *busy, store.preflight)
            expect_unchanged(workspace, *busy, store.doctor, fix=True)
            # Reads never wait for the lock.
            assert store.snapshot().revision == first.revision
        report = RecordStore(workspace).doctor()
        assert report.lock_held and report.lock_holder is not None
        assert report.lock_holder["pid"] == os.getpid()
        assert lock_is_held(lock_path(workspace))
    assert RecordStore(workspace, lock_timeout=0).save([manual("now free")]).status == "saved"
    assert RecordStore(workspace).doctor().lock_holder is None


def test_a_waiting_writer_proceeds_when_the_lock_is_released(workspace: Path) -> None:
    seed(workspace)
    results: list[WriteResult] = []
    lock = WriterLock(lock_path(workspace), timeout=0)
    with lock:
        store = RecordStore(workspace, lock_timeout=60)
        waiter = threading.Thread(target=lambda: results.append(store.save([manual("waited")])))
        waiter.start()
        waiter.join(0.2)
        # It cannot have finished: the lock is still held.
        assert waiter.is_alive() and results == []
    waiter.join(60)
    assert [r.status for r in results] == ["saved"]


def test_a_lock_held_by_a_live_process_fails_closed(workspace: Path) -> None:
    first = seed(workspace)
    path = lock_path(workspace)
    inode = path.stat().st_ino
    with children((HOLD_LOCK, (str(path),))) as (holder,):
        holder.expect("locked")
        store = RecordStore(workspace, lock_timeout=0.1)
        expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.save, [manual("x")])
        expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.preflight)
        report = store.doctor()
        assert report.lock_held and report.lock_holder is not None
        assert report.lock_holder["pid"] == holder.pid
        assert path.stat().st_ino == inode  # never deleted or replaced
        holder.send("release")
        holder.expect("released")
        holder.finish()
    assert store.save([manual("after release")], first.revision).status == "saved"
    assert path.stat().st_ino == inode


def test_a_killed_holder_frees_the_lock_at_once(workspace: Path) -> None:
    first = seed(workspace)
    path = lock_path(workspace)
    with children((HOLD_LOCK, (str(path),))) as (holder,):
        holder.expect("locked")
        assert lock_is_held(path)
        holder.kill()
    # No cleanup, no lease expiry: the next writer proceeds without waiting at all.
    assert path.exists()
    assert not lock_is_held(path)
    assert RecordStore(workspace).doctor().lock_held is False
    store = RecordStore(workspace, lock_timeout=0)
    assert store.save([manual("next writer")], first.revision).status == "saved"
    assert json.loads(path.read_bytes())["pid"] == os.getpid()


@pytest.mark.parametrize("with_store", [False, True], ids=["no records", "with records"])
def test_a_directory_at_the_lock_path_is_busy_and_left_in_place(
    workspace: Path, with_store: bool
) -> None:
    first = seed(workspace) if with_store else None
    path = lock_path(workspace)
    if path.exists():
        path.unlink()
    path.mkdir(parents=True)
    (path / "inside").write_text("not ours")
    (workspace / "memory" / ".records-x.tmp").write_text("stale")
    data = raw(workspace)
    revision = first.revision if first else "0" * 64
    store = RecordStore(workspace, lock_timeout=0.05)
    busy = ("busy", Messages.LOCK_HELD)
    expect_unchanged(workspace, *busy, store.save, [manual("x")])
    expect_unchanged(workspace, *busy, store.revoke, "0" * 36, revision)
    expect_unchanged(workspace, *busy, store.compact, revision)
    expect_unchanged(workspace, *busy, store.preflight)
    expect_unchanged(workspace, *busy, store.doctor, fix=True)
    assert store.doctor().lock_held is True
    assert path.is_dir() and (path / "inside").read_text() == "not ours"
    assert raw(workspace) == data


@pytest.mark.parametrize("dangling", [False, True], ids=["to a file", "dangling"])
def test_a_symlink_at_the_lock_path_is_busy_and_never_followed(
    tmp_path: Path, workspace: Path, dangling: bool
) -> None:
    seed(workspace)
    target = tmp_path / "elsewhere"
    if not dangling:
        target.write_text("someone else's file")
    path = lock_path(workspace)
    path.unlink()
    path.symlink_to(target)
    store = RecordStore(workspace, lock_timeout=0.05)
    expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.save, [manual("x")])
    expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.preflight)
    assert path.is_symlink()
    if dangling:
        assert not target.exists()
    else:
        assert target.read_text() == "someone else's file"


def test_an_unheld_lock_file_with_any_content_does_not_block(workspace: Path) -> None:
    first = seed(workspace)
    path = lock_path(workspace)
    for content in (b"not json at all", b'{"machineId":"sha256:other","pid":1,"nonce":"x"}', b""):
        path.write_bytes(content)
        store = RecordStore(workspace, lock_timeout=0)
        assert store.preflight().revision == first.revision
        assert path.read_bytes() == content  # preflight only looks
    assert store.save([manual("writes too")]).status == "saved"


def test_lock_holder_reads_diagnostics_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    assert lock_holder(path) is None
    assert not lock_is_held(path) and not path.exists()  # checking never creates it
    path.write_text("garbage")
    assert lock_holder(path) is None
    path.write_text("[1, 2]")
    assert lock_holder(path) is None
    path.write_text('{"pid": 12}')
    assert lock_holder(path) == {"pid": 12}


def test_machine_id_is_a_hash_that_honours_the_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMQUILL_MACHINE_ID", "test-machine")
    assert machine_id() == "sha256:" + hashlib.sha256(b"test-machine").hexdigest()
    monkeypatch.delenv("MEMQUILL_MACHINE_ID")
    assert machine_id().startswith("sha256:") and len(machine_id()) == 71
    assert machine_id() != "sha256:" + hashlib.sha256(b"test-machine").hexdigest()


def test_a_writer_that_gave_up_waiting_never_keeps_the_lock(workspace: Path) -> None:
    first = seed(workspace)
    path = lock_path(workspace)
    store = RecordStore(workspace, lock_timeout=0.2)
    with children((HOLD_LOCK, (str(path),))) as (holder,):
        holder.expect("locked")
        # Its request stays queued in the kernel after it gave up; when the holder lets go,
        # that request is granted and must be let go of at once.
        expect_unchanged(workspace, "busy", Messages.LOCK_HELD, store.save, [manual("x")])
        holder.send("release")
        holder.expect("released")
        holder.finish()
    patient = RecordStore(workspace, lock_timeout=30)
    assert patient.save([manual("after")], first.revision).status == "saved"
    assert not lock_is_held(path)


def test_a_probe_never_makes_a_writer_that_does_not_wait_busy(workspace: Path) -> None:
    seed(workspace)
    path = lock_path(workspace)
    stop = threading.Event()
    probes = [0]

    def probe() -> None:
        # What preflight and doctor do: take the lock for a moment to see whether it is free.
        while not stop.is_set():
            lock_is_held(path)
            probes[0] += 1

    prober = threading.Thread(target=probe)
    prober.start()
    try:
        store = RecordStore(workspace, lock_timeout=0)
        statuses = [store.save([manual(f"fact {n}")]).status for n in range(40)]
    finally:
        stop.set()
        prober.join()
    assert statuses == ["saved"] * 40
    assert probes[0] > 40


def test_a_failed_directory_sync_is_reported_and_frees_the_lock(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saved = seed(workspace)
    record_id = saved.targets[0].record_id
    assert record_id is not None

    def failing(directory: Path) -> None:
        # A rewrite's rename is made durable before the lock is let go: the next writer may
        # append to the renamed file, and its fsync covers the bytes, not the name.
        assert lock_is_held(lock_path(workspace))
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr("memquill.store._transaction.fsync_folder", failing)
    store = RecordStore(workspace, lock_timeout=0)
    revision = store.snapshot().revision
    expect_error("storage", Messages.SAVE_FAILED, store.correct, record_id, "unsure", revision)
    assert not lock_is_held(lock_path(workspace))
