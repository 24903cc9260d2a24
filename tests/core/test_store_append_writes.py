"""A remember appends to ``records.md``; a torn tail is named and repaired, never read as data.

issue 33 item 3: a write's cost must not grow with the file, so a save into an existing store
writes only its new blocks (the same inode, nothing else rewritten) and fsyncs the file once;
the store revision stays what a full read computes, and an edit made by someone else between
two writes is still seen. A power cut in the middle of an append can leave the first bytes of
an unacknowledged block: ``doctor`` names that torn tail, and ``doctor --fix`` cuts the file
back to its last complete block after a backup, losing no acknowledged record.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from tests.core.store_helpers import (
    Child,
    children,
    expect_error,
    manual,
    raw,
    records_path,
    revision_of,
)

from memquill import RecordStore
from memquill.store import _memo, _transaction
from memquill.store._codec import HEADER, StoreImage, decode_store, encode_block
from memquill.store._lock import WriterLock
from memquill.store._record import Record
from memquill.store._record_list import RecordList
from memquill.tools._writes import outcome_of


def _filled(workspace: Path, count: int = 300) -> RecordStore:
    store = RecordStore(workspace)
    for start in range(0, count, 40):
        store.save([manual(f"seed fact number {i}") for i in range(start, start + 40)])
    return store


def test_a_save_into_a_big_store_writes_only_its_new_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _filled(tmp_path)
    file = records_path(tmp_path)
    before = os.stat(file)
    written: list[int] = []
    real_write = os.write

    def counted(fd: int, data: bytes | memoryview) -> int:
        count = real_write(fd, data)
        written.append(count)
        return count

    monkeypatch.setattr(os, "write", counted)
    result = store.save([manual("one more fact")])
    after = os.stat(file)
    monkeypatch.undo()
    assert result.status == "saved"
    block = encode_block(result.records[-1]).encode()
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size + len(block))
    assert sum(written) == len(block)
    assert raw(tmp_path).endswith(block)


def test_a_first_write_decodes_the_file_before_it_takes_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process's first write into 100,000 records decoded them all under the writer lock,
    # holding every other writer past its timeout (16 writers: 91 of 160 puts `busy`).
    _filled(tmp_path)
    events: list[str] = []

    def decode(text: str, intact: list[int] | None = None) -> StoreImage:
        events.append("decode whole")
        return decode_store(text, intact)

    class Lock(WriterLock):
        def __enter__(self) -> Lock:
            events.append("lock")
            super().__enter__()
            return self

    monkeypatch.setattr(_memo, "decode_store", decode)
    monkeypatch.setattr(_transaction, "WriterLock", Lock)
    result = RecordStore(tmp_path).save([manual("a first write in a new process")])
    assert result.status == "saved"
    assert events == ["decode whole", "lock"]


class _TailOnly(RecordList):
    """Records that refuse a walk from the start: only the newest may be read."""

    __slots__ = ()

    def __iter__(self) -> Iterator[Record]:
        raise AssertionError("a write's outcome walked every record from the first")


def test_a_write_outcome_finds_its_record_from_the_end(tmp_path: Path) -> None:
    # Every adapter's write goes through outcome_of: a scan from the first record cost 7 ms a
    # write at 50,000 records, more than the write itself.
    store = _filled(tmp_path)
    result = store.save([manual("the newest fact of all")])
    tail_only = _TailOnly(result.records)

    outcome = outcome_of("remember", replace(result, records=tail_only), result.record_id, "saved")

    assert outcome.record_id == result.record_id
    assert outcome.record_revision == result.record_revision


def test_the_revision_after_appends_is_what_a_full_read_computes(tmp_path: Path) -> None:
    store = _filled(tmp_path, 80)
    for i in range(5):
        result = store.save([manual(f"appended {i}")])
        assert result.revision == revision_of(tmp_path, raw(tmp_path))
        assert RecordStore(tmp_path).snapshot().revision == result.revision
    assert len(RecordStore(tmp_path).snapshot().records) == 85


def test_an_edit_between_two_appends_is_seen_by_the_next_write(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    store.save([manual("before the edit")])
    file = records_path(tmp_path)
    data = file.read_bytes()
    # A same-size edit in place, as an editor that writes into the file would make.
    edited = data.replace(b"seed fact number 7\n", b"seed fact number 9\n", 1)
    assert edited != data and len(edited) == len(data)
    with open(file, "r+b") as handle:
        handle.write(edited)
    result = store.save([manual("after the edit")])
    assert result.revision == revision_of(tmp_path, raw(tmp_path))
    contents = [record.content for record in result.records]
    assert contents.count("seed fact number 9") == 2
    assert raw(tmp_path).startswith(edited)


def test_a_corrected_fact_is_written_whole_and_still_reads(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    saved = store.save([manual("to correct")])
    assert saved.record_id is not None
    result = store.correct(saved.record_id, "corrected", saved.revision)
    assert result.revision == revision_of(tmp_path, raw(tmp_path))
    snapshot = RecordStore(tmp_path).snapshot()
    assert [r.status for r in snapshot.records if r.root_id == saved.record_id] == [
        "superseded",
        "active",
    ]


# A writer that stops inside its append: the first half of its block is written, then it
# waits to be killed (a power cut that kept only part of an unsynced write looks the same) or
# told to go on (a writer the scheduler paused mid-write).
TORN_APPEND = """
import os, sys
from memquill import RecordStore
from memquill.store._results import Candidate

store = RecordStore(sys.argv[1], lock_timeout=30)
store.snapshot()
real_write = os.write

def half_then_wait(fd, data):
    view = memoryview(data)
    if len(view) > 40 and os.fstat(fd).st_size > 0:
        written = real_write(fd, view[: len(view) // 2])
        print("torn", flush=True)
        if sys.stdin.readline().strip() != "go":
            raise SystemExit(3)
        os.write = real_write
        return written
    return real_write(fd, data)

os.write = half_then_wait
store.save([Candidate(sys.argv[2], {"kind": "manual"}, sys.argv[2])])
print("acknowledged", flush=True)
"""


def _torn(tmp_path: Path) -> tuple[RecordStore, bytes]:
    store = _filled(tmp_path, 40)
    acknowledged = store.save([manual("the last acknowledged fact")])
    assert acknowledged.status == "saved"
    before = raw(tmp_path)
    with children((TORN_APPEND, (str(tmp_path), "never acknowledged"))) as [writer]:
        writer.expect("torn")
        writer.kill()
    after = raw(tmp_path)
    assert after.startswith(before) and len(after) > len(before)
    return store, before


def test_kill_9_inside_an_append_loses_no_acknowledged_write(tmp_path: Path) -> None:
    store, before = _torn(tmp_path)
    # Nothing reads the torn tail as data, and no write builds on it.
    message = _corrupt_message(store)
    expect_error("corrupt", message, store.snapshot)
    expect_error("corrupt", message, store.save, [manual("a fact after the crash")])
    assert raw(tmp_path).startswith(before)
    report = store.doctor()
    assert report.diagnosis is not None
    assert "torn tail" in report.diagnosis.reason
    fixed = store.doctor(fix=True)
    assert fixed.repaired and fixed.backup is not None
    assert raw(tmp_path) == before
    contents = [r.content for r in RecordStore(tmp_path).snapshot().records]
    assert "the last acknowledged fact" in contents
    assert "never acknowledged" not in contents
    backup = (tmp_path / fixed.backup).read_bytes()
    assert backup.startswith(before) and len(backup) > len(before)
    again = RecordStore(tmp_path).save([manual("a fact after the repair")])
    assert again.status == "saved"


def test_a_read_during_an_append_waits_for_the_writer(tmp_path: Path) -> None:
    # Reads take no lock, and an append is not atomic to them: a read that ends inside the
    # new block used to fail as ``corrupt`` (four agents inserting into one memory-tool file
    # met it under load). It now waits for the writer and reads what it wrote.
    _filled(tmp_path, 40)
    with children((TORN_APPEND, (str(tmp_path), "appended while read"))) as [writer]:
        writer.expect("torn")
        reader = RecordStore(tmp_path)  # its own store: nothing of the file memoised
        doctor = RecordStore(tmp_path)
        with ThreadPoolExecutor(2) as pool:
            read = pool.submit(reader.snapshot)
            report = pool.submit(doctor.doctor)
            both: list[Future[Any]] = [read, report]
            done, _ = wait(both, timeout=0.5)
            assert not done, [future.exception() for future in done]  # both wait
            writer.send("go")
            writer.expect("acknowledged")
            contents = {record.content for record in read.result(timeout=30).records}
            assert report.result(timeout=30).diagnosis is None
        writer.finish()
    assert "appended while read" in contents
    assert len(contents) == 41


def _corrupt_message(store: RecordStore) -> str:
    try:
        store.snapshot()
    except Exception as error:
        return str(getattr(error, "message", error))
    raise AssertionError("the torn file read as valid")


def test_doctor_names_a_torn_tail_of_zeros_and_cuts_it(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    before = raw(tmp_path)
    file = records_path(tmp_path)
    with open(file, "ab") as handle:  # a power cut that kept the new size but not the data
        handle.write(b"\0" * 512)
    report = store.doctor()
    assert report.diagnosis is not None and "torn tail" in report.diagnosis.reason
    assert store.doctor(fix=True).repaired
    assert raw(tmp_path) == before


def test_doctor_names_where_a_half_written_block_starts(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    before = raw(tmp_path)
    store.save([manual("a fact the power cut interrupted")])
    block = raw(tmp_path)[len(before) :]  # an append writes only the new block
    records_path(tmp_path).write_bytes(before + block[: len(block) // 2])
    report = store.doctor()
    assert report.diagnosis is not None and report.diagnosis.record_index == 40
    assert f"the {len(block) // 2} bytes after record 40" in report.diagnosis.reason
    assert store.doctor(fix=True).repaired
    assert raw(tmp_path) == before


def test_a_hand_edit_of_the_last_fact_is_not_a_torn_tail(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    data = raw(tmp_path)
    assert data.endswith(b"seed fact number 39\n\n")
    records_path(tmp_path).write_bytes(data[: -len(b"39\n\n")] + b"39, edited\n\n")
    report = store.doctor()
    assert report.diagnosis is not None
    assert "torn tail" not in report.diagnosis.reason
    assert "edited" in report.diagnosis.reason
    assert HEADER.encode() in raw(tmp_path)


def test_a_child_append_survives_kill_9_once_acknowledged(tmp_path: Path) -> None:
    _filled(tmp_path, 40)
    script = """
import sys
from memquill import RecordStore
from memquill.store._results import Candidate
store = RecordStore(sys.argv[1], lock_timeout=30)
for i in range(20):
    store.save([Candidate(f"child fact {i}", {"kind": "manual"}, f"child {i}")])
    print("acknowledged", i, flush=True)
sys.stdin.readline()
"""
    child = Child(script, str(tmp_path))
    seen = [child.expect("acknowledged") for _ in range(20)]
    child.kill()
    contents = {r.content for r in RecordStore(tmp_path).snapshot().records}
    assert {f"child fact {i}" for i in map(int, seen)} <= contents


def test_reading_another_writers_append_indexes_only_the_new_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several writers of one store each read the others' appends before writing: decoding
    # them must not index every record again (at 10,000 items it cost ~60 ms a write).
    store = _filled(tmp_path)
    other = RecordStore(tmp_path)
    other.save([manual("the other writer's own fact")])  # its memo and index are current
    store.save([manual("a fact the other writer has not read yet")])
    reads = 0
    plain = Record.id

    def counted(record: Record) -> str:
        nonlocal reads
        reads += 1
        return cast(str, plain.fget(record))  # pyright: ignore[reportOptionalCall]

    monkeypatch.setattr(Record, "id", property(counted))
    records = other.snapshot().records

    assert records[-1].content == "a fact the other writer has not read yet"
    assert reads < 20
