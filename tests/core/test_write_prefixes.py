"""Writes take the short forms read tools show, expanded by the store under its lock; a prefix
never weakens compare-and-swap."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.core.store_helpers import records_path

from memquill import MemorySession, MemoryToolset, Record, WriteSource, correct, forget
from memquill.errors import ConflictError, InvalidInputError, Messages, NotFoundError
from memquill.store._codec import HEADER, StoreImage, encode_store
from memquill.store._edits import expand_id, expand_revision
from memquill.store._record import JSONValue
from memquill.store._store import RecordStore
from memquill.tools import _writes as writes_module

MANUAL = WriteSource("manual")


def record(record_id: str, content: str, status: str = "active") -> Record:
    meta: dict[str, JSONValue] = {
        "id": record_id,
        "rootId": record_id,
        "source": {"kind": "manual"},
        "status": status,
        "createdAt": "2025-01-01T00:00:00.000Z",
        "updatedAt": "2025-01-01T00:00:00.000Z",
        "operationHash": "0" * 64 if status == "active" else "1" * 64,
    }
    return Record(meta, content)


def store_with(workspace: Path, *records: Record) -> RecordStore:
    records_path(workspace).parent.mkdir(parents=True)
    records_path(workspace).write_text(encode_store(StoreImage(HEADER, records)))
    return RecordStore(workspace)


def test_an_id_prefix_names_one_record_preferring_active_ones(tmp_path: Path) -> None:
    active = "abcdef01-0000-4000-8000-000000000001"
    superseded = "abcdef01-0000-4000-8000-000000000002"
    other = "12345678-0000-4000-8000-000000000003"
    snapshot = store_with(
        tmp_path,
        record(active, "now"),
        record(superseded, "", status="superseded"),
        record(other, "other"),
    ).snapshot()
    assert expand_id(snapshot, "abcdef01", forgetting=False) == active
    assert expand_id(snapshot, "abcdef01", forgetting=True) == active
    assert expand_id(snapshot, superseded, forgetting=False) == superseded
    assert expand_id(snapshot, "abcdef01-0000-4000-8000-00000000000", forgetting=False) == active
    with pytest.raises(NotFoundError, match=re.escape(Messages.ACTIVE_NOT_FOUND)):
        expand_id(snapshot, "ffffffff", forgetting=False)
    with pytest.raises(NotFoundError, match=re.escape(Messages.NOT_FOUND)):
        expand_id(snapshot, "ffffffff", forgetting=True)
    both = store_with(tmp_path / "two", record(active, "a"), record(superseded, "b")).snapshot()
    with pytest.raises(InvalidInputError, match="more than one record"):
        expand_id(both, "abcdef01", forgetting=False)


def test_a_revision_prefix_starts_a_current_revision_or_conflicts(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "Tea over coffee.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    snapshot = RecordStore(tmp_path).snapshot()
    own = outcome.record_revision
    assert expand_revision(snapshot, None, snapshot.revision[:16]) == snapshot.revision
    assert expand_revision(snapshot, outcome.record_id, own[:16]) == own
    # A prefix of no current revision stays a prefix, which no full revision equals: the store
    # refuses it under its lock as it refuses any stale revision.
    assert expand_revision(snapshot, None, own[:16]) == own[:16]  # no record named
    writes_module.remember(session, "Deploys on Tuesdays.", source=MANUAL)
    stale = snapshot.revision[:16]  # a prefix of an old store revision
    assert expand_revision(RecordStore(tmp_path).snapshot(), None, stale) == stale
    with pytest.raises(ConflictError):
        correct(session, outcome.record_id, "Tea, always.", stale, source=MANUAL)
    with pytest.raises(ConflictError):
        writes_module.compact(session, stale, source=MANUAL)


def test_tools_update_and_forget_with_the_short_forms_search_shows(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    tools = MemoryToolset(session)
    saved = tools.call("memory_remember", {"content": "The standup is at 9:30."}).structured
    assert saved is not None
    hit = tools.call("memory_search", {"query": "standup"})
    short = saved["recordRevision"][:16]
    assert f"revision:{short})" in hit.text and saved["recordRevision"] not in hit.text
    assert hit.text.count(saved["recordId"]) == 1
    updated = tools.call(
        "memory_update",
        {"id": saved["recordId"][:8], "content": "At 9:15 now.", "expected_revision": short},
    )
    receipt = json.loads(updated.text)
    assert receipt["status"] == "saved" and len(receipt["recordId"]) == 36
    assert len(receipt["recordRevision"]) == 64
    stale = tools.call("memory_forget", {"id": receipt["recordId"][:8], "expected_revision": short})
    assert stale.is_error and json.loads(stale.text)["code"] == "conflict"
    gone = tools.call(
        "memory_forget",
        {"id": receipt["recordId"][:10], "expected_revision": receipt["recordRevision"][:20]},
    )
    assert json.loads(gone.text)["recordId"] == receipt["recordId"]


def test_a_prefix_read_before_another_write_is_refused(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "Deploys on Tuesdays.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    short_id, short_revision = outcome.record_id[:8], outcome.record_revision[:16]
    RecordStore(tmp_path).correct(
        outcome.record_id, "Deploys on Wednesdays.", outcome.record_revision
    )
    before = records_path(tmp_path).read_bytes()
    with pytest.raises(NotFoundError) as info:  # the id names an old version now
        correct(session, short_id, "Deploys on Thursdays.", short_revision, source=MANUAL)
    assert records_path(tmp_path).read_bytes() == before
    current = RecordStore(tmp_path).snapshot().records[-1]
    assert info.value.current_id == current.id


def test_the_store_expands_short_forms_only_when_asked(tmp_path: Path) -> None:
    store = RecordStore(tmp_path)
    saved = writes_module.remember(
        MemorySession(tmp_path, "chat-1", "read_write"), "Tea.", source=MANUAL
    )
    assert saved.record_id is not None and saved.record_revision is not None
    short_id, short_revision = saved.record_id[:8], saved.record_revision[:16]
    with pytest.raises(ConflictError):  # a plain store call names full values
        store.correct(short_id, "Green tea.", short_revision)
    corrected = store.correct(short_id, "Green tea.", short_revision, prefixes=True)
    assert corrected.status == "saved" and corrected.record_revision is not None
    new_id = corrected.record_id or ""
    gone = store.revoke_many([(new_id[:8], corrected.revision[:16])], prefixes=True)
    assert gone.status == "saved" and gone.record_id == corrected.record_id


def test_forget_reports_the_full_id_it_resolved(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "A fact to forget.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    done = forget(session, outcome.record_id[:8], outcome.record_revision[:16], source=MANUAL)
    assert done.record_id == outcome.record_id


def test_an_old_id_with_a_prefix_of_the_current_versions_revision_corrects_it(
    tmp_path: Path,
) -> None:
    # What a model holds after another writer corrected the fact: the old id it read, and the
    # short revision of the current version the not_found pointed it to.
    session = MemorySession(tmp_path, "chat-1", "read_write")
    first = writes_module.remember(session, "Deploys on Tuesdays.", source=MANUAL)
    assert first.record_id is not None and first.record_revision is not None
    second = correct(session, first.record_id, "Wednesdays.", first.record_revision, source=MANUAL)
    assert second.record_id is not None and second.record_revision is not None
    third = correct(
        session, first.record_id[:8], "Thursdays.", second.record_revision[:16], source=MANUAL
    )
    assert third.status == "saved"
    snapshot = RecordStore(tmp_path).snapshot()
    current = snapshot.find(third.record_id or "")
    assert current is not None and current.supersedes == second.record_id


def test_a_batch_expands_every_short_form_before_it_checks_any(tmp_path: Path) -> None:
    # The first refusal of a batch is the same whatever comes after it: an ambiguous prefix
    # anywhere is named before a stale revision earlier in the batch.
    session = MemorySession(tmp_path, "chat-1", "read_write")
    other = "12345678-0000-4000-8000-000000000003"
    store_with(
        tmp_path,
        record("abcdef01-0000-4000-8000-000000000001", "one"),
        record("abcdef01-0000-4000-8000-000000000002", "two"),
        record(other, "other"),
    )
    stale = "0" * 64
    with pytest.raises(InvalidInputError, match="more than one record"):
        writes_module.forget_many(session, [(other, stale), ("abcdef01", stale)], source=MANUAL)
