"""``RecordStore`` semantics: the spec's 12.1 cases, translated to memquill's design.

Every test that does not need a second workspace or a symlink runs on both backends (the
workspace file and PostgreSQL: ``backing`` in ``conftest.py``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.core.conftest import Backing
from tests.core.store_helpers import (
    conversation,
    expect_error,
    expect_unchanged,
    manual,
    raw,
    records_path,
    revision_of,
    tool,
)

from memquill import NotFoundError, RecordStore
from memquill.errors import MemoryRecordError, Messages
from memquill.private_paths import is_managed_record_path
from memquill.store._codec import HEADER, LEGACY_HEADER, decode_store, iso_timestamp
from memquill.store._record_key import (
    key_id,
    operation_hashes,
    recognised_hashes,
    written_and_recognised,
)
from memquill.store._results import Candidate, WriteResult
from memquill.store._tombstones import is_ledger


class Clock:
    """A clock that moves one second per reading, so timestamps are predictable."""

    def __init__(self) -> None:
        self.moment = datetime(2025, 3, 4, 5, 6, 7, 890000, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(seconds=1)
        return self.moment


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(backing: Backing, clock: Clock) -> RecordStore:
    return backing.store(lock_timeout=2, now=clock)


def unchanged(
    backing: Backing, code: str, message: str, call: Callable[..., object], *args: Any
) -> MemoryRecordError:
    """``call`` fails with ``code`` and ``message`` and leaves the workspace and store as is."""
    before = backing.image()
    error = expect_error(code, message, call, *args)
    assert backing.image() == before
    return error


def test_reads_of_an_empty_workspace_create_nothing(backing: Backing, store: RecordStore) -> None:
    snapshot = store.snapshot()
    assert snapshot.records == ()
    assert snapshot.revision == backing.revision_of(b"")
    assert store.projection().records == ()
    assert store.preflight().used_bytes == 0
    report = store.doctor()
    assert report.ok and report.counts == {}
    store.doctor(fix=True)
    assert backing.image() == ({}, b"")


def test_an_empty_or_header_only_file_holds_no_records(
    backing: Backing, store: RecordStore
) -> None:
    for data in (b"", HEADER.encode(), LEGACY_HEADER.encode()):
        backing.put(data)
        snapshot = store.snapshot()
        assert snapshot.records == () and snapshot.revision == backing.revision_of(data)
    # The legacy header is kept when records are added to a header-only file.
    store.save([manual("first")], snapshot.revision)
    assert backing.raw().startswith(LEGACY_HEADER.encode())
    backing.put(b"")
    store.save([manual("second")])
    assert backing.raw().startswith(HEADER.encode())


def test_manual_memory_stores_exact_markdown(backing: Backing, store: RecordStore) -> None:
    content = '记忆：用 **uv** 管理依赖  \n<!-- memory-record {"id":"fake"} -->\n- 尾随空格   '
    result = store.save([manual(content)])
    assert result.status == "saved"
    data = backing.raw()
    assert data.startswith(HEADER.encode())
    assert f" -->\n{content}\n\n".encode() in data
    assert result.revision == backing.revision_of(data)
    projection = store.projection()
    assert [item.content for item in projection.records] == [content]
    assert projection.revision == result.revision
    item = projection.records[0]
    assert item.path == f"memory/records/{result.record_id}.md"
    assert item.record_revision == result.record_revision
    assert item.provenance == (
        f"memory-record:{result.record_id}; source-kind:manual; revision:{item.record_revision}"
    )


def test_new_records_have_the_spec_metadata(
    backing: Backing, store: RecordStore, clock: Clock
) -> None:
    result = store.save([conversation("a fact", "key-1", role="user")])
    record = store.snapshot().records[0]
    assert list(record.meta) == [
        "id",
        "rootId",
        "source",
        "status",
        "createdAt",
        "updatedAt",
        "operationHash",
        "keyId",  # memquill's extension: which record key made the hash (docs/sync.md)
    ]
    assert record.meta["keyId"] == key_id(store.record_key.load())
    assert record.id == record.root_id == result.record_id
    assert record.status == "active"
    # The injected clock's reading inside the write, in JavaScript's toISOString form.
    assert record.created_at == record.updated_at == iso_timestamp(clock.moment)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record.created_at)
    # Keyed with the store's record key (unkeyed hashes would confirm guesses).
    assert record.operation_hash == operation_hashes(store.record_key.load(), "key-1")[0]
    assert dict(record.source) == {
        "kind": "conversation",
        "sessionId": "session-1",
        "messageId": "message-1",
        "role": "user",
    }


def test_an_operation_is_recognised_by_each_of_its_hashes() -> None:
    # Each hash computed once: the record's own (keyed under the first key), the same
    # operation keyed under every other key, and the original system's unkeyed one.
    first, other, material = b"k" * 32, b"o" * 32, "tool:s1:item:1"
    written, recognised = written_and_recognised((first, other), material)
    assert written == operation_hashes(first, material)[0]
    assert recognised == recognised_hashes((first, other), material)
    assert recognised == {*operation_hashes(first, material), operation_hashes(other, material)[0]}
    assert len(recognised) == 3
    assert written_and_recognised((), material) == ("", {operation_hashes(first, material)[1]})


def test_stable_idempotency_prevents_duplicate_writes(backing: Backing, store: RecordStore) -> None:
    batch = [manual("first", "k1"), conversation("second", "k2")]
    first = store.save(batch)
    data = backing.raw()
    again = store.save(batch)
    assert again.status == "duplicate"
    assert again.revision == first.revision
    assert again.record_ids == first.record_ids
    assert backing.raw() == data
    # capturedAt is not provenance: a retry at another moment is still the same fact.
    retry = store.save([manual("first", "k1", capturedAt="2030-01-01T00:00:00.000Z")])
    assert (retry.status, retry.record_ids) == ("duplicate", first.record_ids[:1])


def test_a_batch_sees_its_own_earlier_candidates(backing: Backing, store: RecordStore) -> None:
    result = store.save([manual("same", "k"), manual("same", "k"), manual("other", "k2")])
    assert result.status == "saved"
    assert result.record_ids[0] == result.record_ids[1] != result.record_ids[2]
    assert [r.content for r in store.snapshot().records] == ["same", "other"]
    before = backing.raw()
    expect_error("conflict", Messages.KEY_REUSED, store.save, [manual("x", "n"), manual("y", "n")])
    assert backing.raw() == before


@pytest.mark.parametrize(
    "reuse",
    [
        conversation("different text", "key"),
        conversation("the fact", "key", message="message-2"),
        conversation("the fact", "key", session="session-2"),
        conversation("the fact", "key", role="assistant"),
        Candidate("the fact", {"kind": "manual"}, "key"),
    ],
    ids=["content", "message", "session", "role", "kind"],
)
def test_reusing_a_key_for_other_content_or_provenance_fails(
    backing: Backing, store: RecordStore, reuse: Candidate
) -> None:
    store.save([conversation("the fact", "key")])
    unchanged(backing, "conflict", Messages.KEY_REUSED, store.save, [reuse])


def test_a_forgotten_key_is_blocked_even_beside_new_candidates(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([manual("to forget", "old")])
    revoked = store.revoke(saved.record_id or "", saved.revision)
    assert revoked.status == "saved"
    before = backing.image()
    assert store.save([manual("to forget", "old")]).status == "blocked"
    mixed = store.save([manual("brand new", "new"), manual("to forget", "old")])
    assert (mixed.status, mixed.record_ids) == ("blocked", (None, None))
    assert mixed.revision == revoked.revision
    assert backing.image() == before


def test_correction_keeps_history_but_exposes_only_the_current_version(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([conversation("Old choice", "k", role="user")])
    old_id = saved.record_id or ""
    corrected = store.correct(old_id, "New choice", saved.revision)
    assert corrected.status == "saved"
    old, new = store.snapshot().records
    assert (old.id, old.status, old.content) == (old_id, "superseded", "Old choice")
    assert dict(old.source)["messageId"] == "message-1"
    assert old.updated_at == new.created_at
    assert (new.id, new.status, new.content) == (corrected.record_id, "active", "New choice")
    assert new.supersedes == old_id and new.root_id == old_id
    assert dict(new.source) == {"kind": "manual"}
    material = f"correction:{old_id}:{saved.revision}:New choice"
    assert new.operation_hash == operation_hashes(store.record_key.load(), material)[0]
    # The copy keeps the previous key order and appends ``supersedes``.
    assert list(new.meta) == [*old.meta, "supersedes"]
    assert [item.content for item in store.projection().records] == ["New choice"]
    # The superseded version's message is a tombstone: re-extraction with a new key is blocked.
    assert store.save([conversation("Old choice again", "k-new")]).status == "blocked"
    # So is its key. The old id with the revision it was read at names the current version.
    assert store.save([conversation("Old choice", "k", role="user")]).status == "blocked"
    current = store.snapshot().record_revision(new)
    refused = unchanged(
        backing,
        "not_found",
        Messages.CORRECTED.format(old=old_id, current=corrected.record_id, revision=current[:16]),
        store.correct,
        old_id,
        "x",
        saved.revision,
    )
    assert isinstance(refused, NotFoundError)
    assert (refused.current_id, refused.current_revision) == (corrected.record_id, current)


def test_correction_accepts_the_record_revision_after_unrelated_writes(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([manual("fact A", "a")])
    record_revision = saved.record_revision or ""
    store.save([manual("fact B", "b")])
    corrected = store.correct(saved.record_id or "", "fact A, corrected", record_revision)
    assert corrected.status == "saved"
    # A retry with the same, now stale, record revision is refused.
    unchanged(
        backing,
        "conflict",
        Messages.STALE,
        store.correct,
        corrected.record_id or "",
        "fact A, again",
        record_revision,
    )


def test_a_correction_of_a_correction_links_to_the_latest(store: RecordStore) -> None:
    first = store.save([manual("v1", "k")])
    second = store.correct(first.record_id or "", "v2", first.revision)
    third = store.correct(second.record_id or "", "v3", second.record_revision or "")
    records = store.snapshot().records
    assert [r.status for r in records] == ["superseded", "superseded", "active"]
    assert records[2].supersedes == second.record_id
    assert {r.root_id for r in records} == {first.record_id}
    assert third.record_id == records[2].id


def test_forget_erases_every_version_and_tombstones_the_source(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([conversation("My locker code is 4711", "k")])
    corrected = store.correct(saved.record_id or "", "My locker code is 4712", saved.revision)
    forgotten = store.revoke(corrected.record_id or "", corrected.record_revision or "")
    assert forgotten.status == "saved"
    records = store.snapshot().records
    assert [(r.status, r.content) for r in records] == [("revoked", ""), ("revoked", "")]
    assert records[1].supersedes == saved.record_id
    assert all(r.operation_hash and r.source for r in records)
    data = backing.raw()
    # Whole sentences: a bare "4711" turns up by chance in the ids and hashes around it.
    assert b"My locker code is 4711" not in data and b"My locker code is 4712" not in data
    assert b"locker" not in data
    assert store.projection().records == ()
    assert store.save([conversation("re-extracted", "k2")]).status == "blocked"
    batch = [conversation("other message", "k3", message="m9"), conversation("again", "k4")]
    assert store.save(batch).status == "blocked"
    assert backing.raw() == data
    # Forgetting again changes nothing.
    again = store.revoke(saved.record_id or "", forgotten.revision)
    assert (again.status, again.revision) == ("duplicate", forgotten.revision)


def test_forgetting_a_superseded_version_forgets_the_whole_fact(store: RecordStore) -> None:
    saved = store.save([manual("v1", "k"), manual("unrelated", "u")])
    corrected = store.correct(saved.record_ids[0] or "", "v2", saved.revision)
    store.revoke(saved.record_ids[0] or "", corrected.revision)
    statuses = {r.content or r.id: r.status for r in store.snapshot().records}
    assert statuses == {
        saved.record_ids[0]: "revoked",
        corrected.record_id: "revoked",
        "unrelated": "active",
    }


def test_tool_correction_records_its_caller_and_forget_still_blocks_the_origin(
    store: RecordStore,
) -> None:
    saved = store.save([conversation("prefers tabs", "k")])
    caller = {"kind": "tool", "sessionId": "correction-session"}
    corrected = store.correct(saved.record_id or "", "prefers spaces", saved.revision, caller)
    assert dict(store.snapshot().records[1].source) == caller
    store.revoke(corrected.record_id or "", corrected.revision)
    assert store.save([conversation("prefers tabs", "fresh-key")]).status == "blocked"
    assert store.save([tool("unrelated tool fact", "t")]).status == "saved"


def test_one_message_may_yield_many_facts(store: RecordStore) -> None:
    store.save([conversation("fact one", "k1")])
    assert store.save([conversation("fact two", "k2")]).status == "saved"
    assert len(store.projection().records) == 2


def test_cas_rejects_stale_revisions_and_other_workspaces(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    store_a, store_b = RecordStore(a), RecordStore(b)
    revision_a = store_a.snapshot().revision
    assert revision_a != store_b.snapshot().revision
    expect_error("conflict", Messages.STALE, store_b.save, [manual("x")], revision_a)
    first = store_b.save([manual("x")], store_b.snapshot().revision)
    store_b.save([manual("y")], first.revision)
    expect_unchanged(b, "conflict", Messages.STALE, store_b.save, [manual("z")], first.revision)
    expect_unchanged(
        b, "conflict", Messages.STALE, store_b.correct, first.record_id, "x2", first.revision
    )
    expect_unchanged(b, "conflict", Messages.STALE, store_b.revoke, first.record_id, revision_a)
    # The store revision of workspace B does not work in A even with identical bytes.
    records_path(a).parent.mkdir()
    records_path(a).write_bytes(raw(b))
    current_b = store_b.snapshot().revision
    expect_unchanged(a, "conflict", Messages.STALE, store_a.revoke, first.record_id, current_b)


def test_save_takes_only_the_store_revision(backing: Backing, store: RecordStore) -> None:
    saved = store.save([manual("x")])
    unchanged(backing, "conflict", Messages.STALE, store.save, [manual("y")], saved.record_revision)


def test_record_revisions_change_only_with_their_record(store: RecordStore) -> None:
    saved = store.save([manual("a", "a"), manual("b", "b")])
    before = {item.id: item.record_revision for item in store.projection().records}
    store.save([manual("c", "c")])
    after = {item.id: item.record_revision for item in store.projection().records}
    assert {key: after[key] for key in before} == before
    record_b = saved.record_ids[1] or ""
    corrected = store.correct(record_b, "b2", before[record_b])
    projection = store.projection()
    assert projection.by_path(f"memory/records/{saved.record_ids[0]}.md") is not None
    assert projection.by_path(f"memory/records/{saved.record_ids[1]}.md") is None
    assert corrected.record_revision == next(
        item.record_revision for item in projection.records if item.id == corrected.record_id
    )


def test_a_writes_record_revision_is_the_one_a_new_read_computes(
    backing: Backing, store: RecordStore
) -> None:
    # A write hashes the block it just encoded for its record revision instead of encoding
    # the record again: whichever way it was published (the first write, an append, a
    # correction appended, a batch, a rewrite), a new store reading it computes the same.
    def tool_keyed(content: str, operation: str, key: str) -> Candidate:
        return replace(tool(content, operation), key=key)

    def written(result: WriteResult) -> None:
        snapshot = backing.store().snapshot()
        record = snapshot.find(result.record_id or "")
        assert record is not None and result.record_revision == snapshot.record_revision(record)

    first = store.save([manual("first", "a")])
    written(first)
    written(store.save([manual("second", "b")]))
    written(store.save([tool("third", "op-3"), tool("fourth", "op-4")]))
    upserted = store.upsert([tool_keyed("keyed", "op-5", "k"), tool_keyed("fifth", "op-6", "f")])
    written(upserted)
    written(store.upsert([tool_keyed("keyed, changed", "op-7", "k")]))
    written(store.correct(first.record_id or "", "first, corrected", first.record_revision or ""))
    written(store.revoke(upserted.record_ids[1] or "", store.snapshot().revision))


def test_the_projection_is_cached_per_revision(store: RecordStore) -> None:
    store.save([manual("x")])
    first = store.projection()
    assert store.projection() is first
    store.save([manual("y")])
    assert store.projection() is not first


def test_invalid_provenance_or_one_bad_candidate_persists_nothing(
    backing: Backing, store: RecordStore
) -> None:
    cases = [
        ([Candidate("x", {"kind": "conversation", "sessionId": "s"}, "k")], "CONVERSATION"),
        ([Candidate("x", {"kind": "tool"}, "k")], "TOOL"),
        ([manual("good", "g"), manual("", "bad")], "CONTENT"),
    ]
    messages = {
        "CONVERSATION": Messages.CONVERSATION_SOURCE,
        "TOOL": Messages.TOOL_SOURCE,
        "CONTENT": Messages.CONTENT,
    }
    for batch, which in cases:
        unchanged(backing, "invalid", messages[which], store.save, batch)
    assert backing.image() == ({}, b"")


def test_a_legacy_file_is_read_and_rewritten_with_its_header(backing: Backing) -> None:
    record_id = "5f0c3c1e-2b7a-4d0e-9f1a-6c2d8e4b7a90"
    block = (
        '<!-- memory-record {"id":"' + record_id + '","rootId":"' + record_id + '",'
        '"source":{"kind":"conversation","sessionId":"会话-1","messageId":"m-1"},'
        '"status":"active","createdAt":"2024-11-02T10:00:00.000Z",'
        '"updatedAt":"2024-11-02T10:00:00.000Z","operationHash":"' + "c" * 64 + '",'
        '"contentLength":14} -->\n用户偏好深色主题 😀 ok\n\n'
    )
    legacy = ("# CodePilot memory records\n\n<!-- memory-records:v1 -->\n\n" + block).encode()
    backing.put(legacy)
    store = backing.store()
    snapshot = store.snapshot()
    assert snapshot.revision == backing.revision_of(legacy)
    assert [r.content for r in snapshot.records] == ["用户偏好深色主题 😀 ok"]
    saved = store.save([manual("a new fact")], snapshot.revision)
    data = backing.raw()
    assert data.startswith(legacy)  # header and the original block kept byte for byte
    assert decode_store(data.decode()).records[1].content == "a new fact"
    assert saved.revision == backing.revision_of(data)
    store.revoke(record_id, saved.revision)
    assert backing.raw().startswith(LEGACY_HEADER.encode())
    assert "用户偏好".encode() not in backing.raw()


def test_managed_record_paths_are_recognised() -> None:
    assert is_managed_record_path("memory/records.md")
    assert is_managed_record_path("memory\\.records-lock")
    assert is_managed_record_path("memory/records/0b6f2a52-8c1e-4c5e-9a0e-3d2b1f7c6a01.md")
    assert not is_managed_record_path("memory/user-note.md")


def test_compact_drops_superseded_content_and_keeps_tombstones(
    backing: Backing, store: RecordStore
) -> None:
    saved = store.save([conversation("draft v1 " * 100, "k"), manual("keep me", "keep")])
    fact = saved.record_ids[0] or ""
    corrected = store.correct(fact, "draft v2", saved.revision)
    gone = store.save([conversation("forget me", "f", message="m2")])
    revoked = store.revoke(gone.record_id or "", gone.revision)
    size_before = len(backing.raw())
    unchanged(backing, "conflict", Messages.STALE, store.compact, saved.revision)
    unchanged(backing, "conflict", Messages.STALE, store.compact, corrected.record_revision)
    compacted = store.compact(revoked.revision)
    assert compacted.status == "saved"
    data = backing.raw()
    assert len(data) < size_before and b"draft v1" not in data
    records = decode_store(data.decode()).records
    # The forgotten fact folds into the ledger of compact tombstones, which sorts first.
    assert [(r.status, r.content) for r in records] == [
        ("revoked", ""),
        ("superseded", ""),
        ("active", "keep me"),
        ("active", "draft v2"),
    ]
    assert is_ledger(records[0]) and records[3].supersedes == fact
    # Tombstones still block: the corrected key and message, the forgotten key and message.
    assert store.save([conversation("draft v1", "k")]).status == "blocked"
    assert store.save([conversation("new", "k-new")]).status == "blocked"
    assert store.save([conversation("forget me", "f", message="m2")]).status == "blocked"
    assert store.save([conversation("new", "f-new", message="m2")]).status == "blocked"
    # Nothing left to drop: no write.
    again = store.compact(compacted.revision)
    assert (again.status, again.revision) == ("duplicate", compacted.revision)
    assert backing.raw() == data
    # The compacted store still corrects, forgets and saves.
    store.revoke(fact, again.revision)
    assert store.save([manual("after compaction", "after")]).status == "saved"


def test_results_report_the_written_revision(backing: Backing, store: RecordStore) -> None:
    saved = store.save([manual("one"), manual("two")])
    assert saved.revision == backing.revision_of(backing.raw())
    assert len(saved.record_ids) == 2
    assert [r.id for r in saved.records] == list(saved.record_ids)
    assert saved.record_id == saved.record_ids[0]


def test_a_store_opens_the_same_workspace_through_a_symlinked_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    saved = RecordStore(link).save([manual("via link")])
    assert RecordStore(real).snapshot().revision == saved.revision
    assert saved.revision == revision_of(real, raw(real))
    assert os.path.realpath(link) == str(real)


@pytest.fixture
def many_ids() -> Iterator[list[str]]:
    yield [f"k{i}" for i in range(40)]


def test_a_full_batch_of_forty_saves(store: RecordStore, many_ids: list[str]) -> None:
    result = store.save([manual(f"fact {key}", key) for key in many_ids])
    assert result.status == "saved" and len(set(result.record_ids)) == 40
