"""The order that makes a write durable: fsync the staged file, rename it, fsync the directory.

A rename is only as durable as the bytes it points at and the directory entry that records it,
so the staged file must reach the disk before ``os.replace`` and the directory after it. The
spy records the operating-system calls every write makes, by path, in the order they happen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import manual, records_path

from memquill import RecordStore, WriteResult
from memquill.lifecycle import CommittedTurn
from memquill.lifecycle._ledger import LedgerFile
from memquill.lifecycle._turns import record_turn

Event = tuple[str, str]


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """Every ``os.open``/``os.fsync``/``os.replace`` from now on, as (call, real path)."""
    log: list[Event] = []
    paths: dict[int, str] = {}
    real_open, real_fsync, real_replace = os.open, os.fsync, os.replace

    def spy_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        fd = real_open(path, flags, *args, **kwargs)
        paths[fd] = os.path.realpath(path)
        return fd

    def spy_fsync(fd: Any) -> None:
        number = fd if isinstance(fd, int) else fd.fileno()
        log.append(("fsync", paths.get(number, f"fd {number}")))
        real_fsync(fd)

    def spy_replace(source: Any, target: Any, *args: Any, **kwargs: Any) -> None:
        log.append(("replace", f"{os.path.realpath(source)} -> {os.path.realpath(target)}"))
        real_replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_open)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "replace", spy_replace)
    return log


def durable_sequence(log: list[Event], workspace: Path) -> list[Event]:
    """The calls that publish ``records.md``: fsyncs of staged files and of ``memory/``, and
    renames onto ``records.md``, in order."""
    directory = os.path.realpath(workspace / "memory")
    target = os.path.realpath(records_path(workspace))
    return [
        (call, path)
        for call, path in log
        if (call == "fsync" and (path == directory or Path(path).name.startswith(".records-")))
        or (call == "replace" and path.endswith(f" -> {target}"))
    ]


def expect_one_durable_write(log: list[Event], workspace: Path) -> None:
    sequence = durable_sequence(log, workspace)
    renames = [path for call, path in sequence if call == "replace"]
    assert len(renames) == 1, log
    staged = renames[0].split(" -> ")[0]
    assert Path(staged).parent == Path(os.path.realpath(workspace / "memory"))
    directory = os.path.realpath(workspace / "memory")
    # Exactly: the staged file reaches the disk, then it is renamed, then the directory entry.
    assert sequence == [("fsync", staged), ("replace", renames[0]), ("fsync", directory)], log


def test_a_first_save_syncs_the_staged_file_then_renames_then_syncs_the_directory(
    tmp_path: Path, events: list[Event]
) -> None:
    RecordStore(tmp_path).save([manual("Deploys happen on Tuesdays.")])
    expect_one_durable_write(events, tmp_path)
    assert "Tuesdays" in records_path(tmp_path).read_text("utf-8")


def test_every_kind_of_write_keeps_the_order(tmp_path: Path, events: list[Event]) -> None:
    store = RecordStore(tmp_path)
    saved = store.save([manual("Deploys happen on Tuesdays.")])

    def correct() -> WriteResult:
        return store.correct(saved.record_id or "", "Deploys on Wednesdays.", saved.revision)

    def compact() -> WriteResult:  # drops the superseded Tuesday text
        return store.compact(store.snapshot().revision)

    def revoke() -> WriteResult:
        snapshot = store.snapshot()
        return store.revoke(snapshot.records[-1].id, snapshot.revision)

    for write in (correct, compact, revoke):
        events.clear()
        assert write().status == "saved", write.__name__
        expect_one_durable_write(events, tmp_path)


def test_a_refused_write_syncs_and_renames_nothing(tmp_path: Path, events: list[Event]) -> None:
    store = RecordStore(tmp_path)
    store.save([manual("Deploys happen on Tuesdays.", "k")])
    events.clear()
    assert store.save([manual("Deploys happen on Tuesdays.", "k")]).status == "duplicate"
    assert durable_sequence(events, tmp_path) == []


def test_a_ledger_change_syncs_the_staged_file_then_renames_then_syncs_its_folder(
    tmp_path: Path, events: list[Event]
) -> None:
    """The extraction job ledger is published the same way (``lifecycle/_ledger.py``)."""
    ledger = LedgerFile.of(tmp_path)
    for number in (1, 2):  # the first change creates ``.assistant``, the second rewrites
        events.clear()
        turn = CommittedTurn("s1", f"u{number}", f"a{number}", user_text="hello")
        assert not record_turn(ledger, turn, provider_id="none", now="2026-01-01T00:00:00.000Z")
        directory = os.path.realpath(ledger.directory)
        target = os.path.realpath(ledger.path)
        sequence = [
            (call, path)
            for call, path in events
            if (call == "fsync" and (path == directory or Path(path).name.endswith(".tmp")))
            or (call == "replace" and path.endswith(f" -> {target}"))
        ]
        (rename,) = [path for call, path in sequence if call == "replace"]
        staged = rename.split(" -> ")[0]
        assert Path(staged).parent == Path(directory)
        assert sequence == [("fsync", staged), ("replace", rename), ("fsync", directory)], events
    assert len(ledger.read().turns) == 2
