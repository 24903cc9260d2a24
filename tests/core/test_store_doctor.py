"""``doctor``: what it reports, and that ``fix`` removes only stale staging files."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.store_helpers import expect_error, manual, raw, records_path, tree

from memquill import RecordStore
from memquill.errors import Messages
from memquill.store._codec import MAX_STORE_BYTES


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_a_healthy_store_reports_counts_capacity_and_a_free_lock(workspace: Path) -> None:
    store = RecordStore(workspace)
    saved = store.save([manual("one", "1"), manual("two", "2")])
    store.correct(saved.record_ids[0] or "", "one, corrected", saved.revision)
    report = store.doctor()
    assert report.ok and report.error is None
    assert report.revision == store.snapshot().revision
    assert dict(report.counts) == {"active": 2, "superseded": 1}
    assert report.used_bytes == len(raw(workspace))
    assert report.max_bytes == MAX_STORE_BYTES
    assert (report.temp_files, report.removed) == ((), ())
    assert report.lock_held is False and report.lock_holder is None


def test_fix_removes_only_staging_files(workspace: Path) -> None:
    store = RecordStore(workspace)
    store.save([manual("one")])
    memory = workspace / "memory"
    stale = [memory / ".records-1.tmp", memory / ".records-2a.tmp"]
    for path in stale:
        path.write_text("staged by a writer that died")
    keep = [memory / "notes.md", memory / "records.tmp", memory / ".records-1.tmp.bak"]
    for path in keep:
        path.write_text("not a staging file")
    before = raw(workspace)
    report = store.doctor()
    assert report.temp_files == ("memory/.records-1.tmp", "memory/.records-2a.tmp")
    assert not report.ok and all(path.exists() for path in stale)
    fixed = store.doctor(fix=True)
    assert fixed.removed == fixed.temp_files == report.temp_files and fixed.ok
    assert not any(path.exists() for path in stale)
    assert all(path.read_text() == "not a staging file" for path in keep)
    assert raw(workspace) == before
    assert (memory / ".records-lock").exists()


def test_fix_leaves_a_directory_that_looks_like_a_staging_file(workspace: Path) -> None:
    odd = workspace / "memory" / ".records-odd.tmp"
    odd.mkdir(parents=True)
    (odd / "inside").write_text("someone's")
    report = RecordStore(workspace).doctor(fix=True)
    assert report.temp_files == ("memory/.records-odd.tmp",) and report.removed == ()
    assert not report.ok
    assert (odd / "inside").read_text() == "someone's"


def test_doctor_on_an_empty_workspace_creates_nothing(workspace: Path) -> None:
    report = RecordStore(workspace).doctor(fix=True)
    assert report.ok and report.revision is not None and report.used_bytes == 0
    assert tree(workspace) == {}


@pytest.mark.parametrize("block", [0, 1])
def test_invalid_utf8_is_corrupt_and_names_its_record(workspace: Path, block: int) -> None:
    store = RecordStore(workspace)
    store.save([manual("first 😀 fact", "a"), manual("second 😀 fact", "b")])
    data = raw(workspace)
    emoji = "😀".encode()
    at = data.find(emoji) if block == 0 else data.rfind(emoji)
    records_path(workspace).write_bytes(data[:at] + emoji[:2] + data[at + 4 :])
    report = store.doctor()
    assert report.error is not None
    assert (report.error.code, report.error.message) == ("corrupt", Messages.EDITED)
    assert getattr(report.error, "record_index", None) == block


def test_doctor_refuses_an_unsafe_workspace(tmp_path: Path) -> None:
    expect_error("unsafe_path", Messages.ABSOLUTE_WORKSPACE, RecordStore("relative").doctor)
    expect_error("storage", Messages.WORKSPACE_MISSING, RecordStore(tmp_path / "missing").doctor)
