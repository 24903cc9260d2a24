"""Capacity: the 2 MiB bound on write and read, preflight reserves, and how space is recovered."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from tests.core.store_helpers import expect_unchanged, manual, raw, records_path, revision_of

from memquill import RecordStore
from memquill.errors import Messages
from memquill.store._codec import HEADER, MAX_STORE_BYTES, StoreImage, encode_store
from memquill.store._record import JSONValue, Record

BIG = 16_000


def big(tag: str) -> str:
    """16000 ASCII characters, unique per tag (the tag leads, so it shows in failures)."""
    return (tag + " ").ljust(BIG, "x")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.mark.slow
def test_capacity_is_distinct_and_forgetting_frees_space(workspace: Path) -> None:
    store = RecordStore(workspace)
    for batch in range(3):
        result = store.save([manual(big(f"b{batch}-{i}"), f"k{batch}-{i}") for i in range(40)])
        assert result.status == "saved"
    full = store.snapshot()
    assert len(full.records) == 120
    assert MAX_STORE_BYTES - 40 * BIG < full.size_bytes <= MAX_STORE_BYTES
    # Twenty more do not fit: capacity, not invalid, and nothing changes.
    more = [manual(big(f"more-{i}"), f"more-{i}") for i in range(20)]
    expect_unchanged(workspace, "capacity", Messages.FULL, store.save, more)
    assert store.snapshot().revision == full.revision
    # A paid model call would be refused up front; a small reserve still fits.
    expect_unchanged(workspace, "capacity", Messages.INSUFFICIENT, store.preflight, 300_000)
    assert store.preflight().used_bytes == full.size_bytes
    # Forgetting one large record frees room for one more; its key stays blocked.
    forgotten = full.records[7]
    revoked = store.revoke(forgotten.id, full.revision)
    assert len(raw(workspace)) < full.size_bytes - BIG + 400
    assert store.save([manual(big("replacement"), "replacement")]).status == "saved"
    assert store.save([manual(forgotten.content, "k0-7")]).status == "blocked"
    assert store.snapshot().revision != revoked.revision


def _exactly_full_file() -> bytes:
    """A valid store of exactly 2 MiB: full records, then one sized to fill the last bytes."""
    records: list[Record] = []

    def record(content: str) -> Record:
        record_id = str(uuid.UUID(int=len(records) + 1, version=4))
        meta: dict[str, JSONValue] = {
            "id": record_id,
            "rootId": record_id,
            "source": {"kind": "manual"},
            "status": "active",
            "createdAt": "2025-01-01T00:00:00.000Z",
            "updatedAt": "2025-01-01T00:00:00.000Z",
            "operationHash": f"{len(records):064x}",
        }
        return Record(meta, content)

    while (
        len(encode_store(StoreImage(HEADER, (*records, record(big("probe")))))) <= MAX_STORE_BYTES
    ):
        records.append(record(big(f"r{len(records)}")))
    length = BIG
    while True:
        data = encode_store(StoreImage(HEADER, (*records, record("y" * length)))).encode()
        if len(data) == MAX_STORE_BYTES:
            return data
        length -= len(data) - MAX_STORE_BYTES


def test_a_store_at_exactly_2_mib_reads_but_takes_nothing_more(workspace: Path) -> None:
    data = _exactly_full_file()
    assert len(data) == MAX_STORE_BYTES
    records_path(workspace).parent.mkdir()
    records_path(workspace).write_bytes(data)
    store = RecordStore(workspace)
    snapshot = store.snapshot()
    assert snapshot.revision == revision_of(workspace, data)
    assert store.preflight(0).used_bytes == MAX_STORE_BYTES
    expect_unchanged(workspace, "capacity", Messages.INSUFFICIENT, store.preflight)
    expect_unchanged(workspace, "capacity", Messages.FULL, store.save, [manual("one more")])
    last = snapshot.records[-1]
    # A correction adds a version; it fits because the write drops the old version's text
    # (automatic compaction, under the lock), keeping its fingerprint.
    corrected = store.correct(last.id, "short", snapshot.revision)
    assert corrected.status == "saved" and len(raw(workspace)) <= MAX_STORE_BYTES
    old = next(r for r in corrected.records if r.id == last.id)
    assert (old.status, old.content) == ("superseded", "") and "textHash" in old.meta
    # Forgetting shrinks the file, so it always fits.
    assert corrected.record_id is not None
    assert store.revoke(corrected.record_id, corrected.revision).status == "saved"
    assert len(raw(workspace)) < MAX_STORE_BYTES


def test_one_byte_over_2_mib_is_refused_on_read(workspace: Path) -> None:
    data = _exactly_full_file()
    records_path(workspace).parent.mkdir()
    records_path(workspace).write_bytes(data + b"\n")
    store = RecordStore(workspace)
    expect_unchanged(workspace, "capacity", Messages.FULL, store.snapshot)
    expect_unchanged(workspace, "capacity", Messages.FULL, store.preflight, 0)
    expect_unchanged(workspace, "capacity", Messages.FULL, store.save, [manual("x")])
    expect_unchanged(workspace, "capacity", Messages.FULL, store.compact, "0" * 64)


def test_the_limit_counts_utf8_bytes_not_characters(workspace: Path) -> None:
    # 16000 CJK characters are 16000 units but 48000 bytes: far fewer fit.
    store = RecordStore(workspace)
    for batch in range(43):
        store.save([manual("记" * BIG, f"cjk-{batch}")])
    expect_unchanged(workspace, "capacity", Messages.FULL, store.save, [manual("记" * BIG, "over")])
    assert len(raw(workspace)) <= MAX_STORE_BYTES


def test_a_write_that_needs_room_compacts_superseded_versions(workspace: Path) -> None:
    store = RecordStore(workspace)
    saved = store.save([manual(big(f"v0-{i}"), f"k{i}") for i in range(40)])
    revision = saved.revision
    # Correct each fact: the superseded versions keep their full text until compaction.
    for record_id in saved.record_ids:
        revision = store.correct(record_id or "", big("v1"), revision).revision
    store.save([manual(big(f"n{i}"), f"n{i}") for i in range(40)])
    later = [manual(big(f"later{i}"), f"later{i}") for i in range(20)]
    # The write that needs room drops the superseded versions' text itself (automatic).
    assert store.save(later).status == "saved"
    assert len(raw(workspace)) < 100 * BIG + 140 * 700
    assert all(not r.content for r in store.snapshot().records if r.status == "superseded")
    assert store.compact(store.snapshot().revision).status == "duplicate"
    # The compacted history still blocks the original keys.
    assert store.save([manual(big("v0-0"), "k0")]).status == "blocked"
