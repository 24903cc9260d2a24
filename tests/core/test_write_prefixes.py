"""Writes take the short forms read tools show; a prefix never weakens compare-and-swap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.core.store_helpers import records_path

from memquill.errors import ConflictError, InvalidInputError, NotFoundError
from memquill.store import Record, Target
from memquill.store._codec import HEADER, StoreImage, encode_store
from memquill.store._record import JSONValue
from memquill.store._store import RecordStore
from memquill.tools import (
    MemorySession,
    MemoryToolset,
    WriteSource,
    _writes as writes_module,
    correct,
    forget,
)
from memquill.tools._resolve import resolve_record, resolve_revision, resolve_target

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
    assert resolve_record(snapshot, "abcdef01", active_only=True) == active
    assert resolve_record(snapshot, "abcdef01", active_only=False) == active
    assert resolve_record(snapshot, superseded, active_only=False) == superseded
    assert resolve_record(snapshot, "abcdef01-0000-4000-8000-00000000000", active_only=True)
    with pytest.raises(NotFoundError):
        resolve_record(snapshot, superseded, active_only=True)
    with pytest.raises(NotFoundError):
        resolve_record(snapshot, "ffffffff", active_only=False)
    both = store_with(tmp_path / "two", record(active, "a"), record(superseded, "b")).snapshot()
    with pytest.raises(InvalidInputError, match="more than one record"):
        resolve_record(both, "abcdef01", active_only=True)


def test_a_revision_prefix_starts_a_current_revision_or_conflicts(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "Tea over coffee.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    snapshot = RecordStore(tmp_path).snapshot()
    own = outcome.record_revision
    assert resolve_revision(snapshot, None, snapshot.revision[:16]) == snapshot.revision
    assert resolve_revision(snapshot, outcome.record_id, own[:16]) == own
    # A prefix of no current revision stays a prefix, which no full revision equals: the store
    # refuses it under its lock as it refuses any stale revision.
    assert resolve_revision(snapshot, None, own[:16]) == own[:16]  # no record named
    writes_module.remember(session, "Deploys on Tuesdays.", source=MANUAL)
    stale = snapshot.revision[:16]  # a prefix of an old store revision
    assert resolve_revision(RecordStore(tmp_path).snapshot(), None, stale) == stale
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


def test_a_prefix_resolved_before_a_concurrent_write_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "Deploys on Tuesdays.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    real = resolve_target

    def then_someone_else_writes(*args: Any, **kwargs: Any) -> tuple[Target, str]:
        resolved = real(*args, **kwargs)
        RecordStore(tmp_path).correct(
            outcome.record_id or "", "Deploys on Wednesdays.", outcome.record_revision or ""
        )
        return resolved

    monkeypatch.setattr(writes_module, "resolve_target", then_someone_else_writes)
    before = records_path(tmp_path).read_bytes()
    with pytest.raises(NotFoundError) as info:  # the id names an old version now
        correct(
            session,
            outcome.record_id[:8],
            "Deploys on Thursdays.",
            outcome.record_revision[:16],
            source=MANUAL,
        )
    after = records_path(tmp_path).read_bytes()
    assert after != before and b"Thursdays" not in after
    current = RecordStore(tmp_path).snapshot().records[-1]
    assert info.value.current_id == current.id


def test_forget_reports_the_full_id_it_resolved(tmp_path: Path) -> None:
    session = MemorySession(tmp_path, "chat-1", "read_write")
    outcome = writes_module.remember(session, "A fact to forget.", source=MANUAL)
    assert outcome.record_id is not None and outcome.record_revision is not None
    done = forget(session, outcome.record_id[:8], outcome.record_revision[:16], source=MANUAL)
    assert done.record_id == outcome.record_id
