"""Automatic compaction (issue 33, item 1, in part): a fact updated over and over never fills
the store; the write that needs room drops old versions' text under the lock."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.core.store_helpers import raw, tool

from memquill import RecordStore
from memquill.store._tombstones import TEXT_HASH_FIELD

MIB = 1024 * 1024


@pytest.mark.slow
def test_one_keyed_fact_updated_past_the_capacity_never_fills_the_store(tmp_path: Path) -> None:
    store = RecordStore(tmp_path, capacity=1 * MIB)
    first = store.save([tool("profile 0 ".ljust(5000, "x"), "k0")])
    assert first.record_id is not None
    for turn in range(1, 300):  # 300 versions of 5,000 characters: 1.5 MB of text
        result = store.correct(
            _current(store, first.record_id),
            f"profile {turn} ".ljust(5000, "y"),
            store.snapshot().revision,
            {"kind": "tool", "sessionId": "s"},
        )
        assert result.status == "saved"

    records = store.snapshot().records
    assert len(records) == 300 and len(raw(tmp_path)) <= 1 * MIB
    assert [r.content[:11] for r in records if r.status == "active"] == ["profile 299"]
    compacted = [r for r in records if r.status == "superseded" and not r.content]
    assert compacted and all(TEXT_HASH_FIELD in r.meta for r in compacted)


def _current(store: RecordStore, root_id: str) -> str:
    snapshot = store.snapshot()
    return next(r.id for r in snapshot.records if r.root_id == root_id and r.status == "active")
