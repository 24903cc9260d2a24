"""A namespace's TTL through memquill's record-level merge: an expiry set on one copy survives
the merge, and an item that expired (and so was forgotten) on one copy stays forgotten."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memquill import RecordStore
from memquill.items import ItemStore
from memquill.items._values import expires_at

ANA = ("memories", "ana")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def _records(root: Path) -> Path:
    return root / "memories" / "ana" / "memory" / "records.md"


def test_a_merge_keeps_one_sides_expiry_and_an_expired_item_stays_forgotten(
    tmp_path: Path,
) -> None:
    clock = Clock()
    laptop, desktop = tmp_path / "laptop", tmp_path / "desktop"
    laptop.mkdir()
    shared = ItemStore(laptop, now=clock)
    shared.put(ANA, "trip", {"content": "Ana is in Porto this week."})
    shared.put(ANA, "brief", {"content": "Ana's badge code is 4411."}, ttl=30)
    shutil.copytree(laptop, desktop)
    base = _records(laptop).read_bytes()

    # The desktop bounds "trip"; on the laptop "brief" expires and is forgotten at a read.
    ItemStore(desktop, now=clock).put(
        ANA, "trip", {"content": "Ana is in Porto this week."}, ttl=600
    )
    clock.now += timedelta(minutes=31)
    assert ItemStore(laptop, now=clock).get(ANA, "brief") is None

    store = RecordStore(laptop / "memories" / "ana")
    store.merge(_records(desktop).read_bytes(), base)

    records = store.snapshot().records
    active = [r for r in records if r.status == "active"]
    assert [r.key for r in active] == ["trip"]
    assert expires_at(active[0].extra) == datetime(2026, 12, 5, 19, 0, tzinfo=UTC)
    text = _records(laptop).read_text("utf-8")
    assert "badge code is 4411" not in text and "brief" not in text  # forgotten stays so
    items = ItemStore(laptop, now=clock)
    assert items.get(ANA, "brief") is None
    kept = items.get(ANA, "trip")
    assert kept is not None and kept.value == {"content": "Ana is in Porto this week."}
