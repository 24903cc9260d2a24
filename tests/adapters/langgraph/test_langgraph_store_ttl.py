"""MemquillStore's TTL: forgetting with a clock. An expired item is forgotten through the store
(tombstone, text erased), by a sweep or at the next read; its expiry is in the record's
metadata and outlives the store; ``refresh_on_read`` extends it."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import pytest
from langgraph.store.base import TTLConfig

from memquill import InvalidInputError, RecordStore
from memquill.items import ItemStore
from memquill_langchain.store import MemquillStore

ANA = ("memories", "ana")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, minutes: float) -> None:
        self.now += timedelta(minutes=minutes)


def _records(root: Path) -> str:
    return (root / "memories" / "ana" / "memory" / "records.md").read_text("utf-8")


def test_an_expired_item_is_forgotten_at_the_next_read_and_the_expiry_is_in_the_record(
    tmp_path: Path,
) -> None:
    clock = Clock()
    items = ItemStore(tmp_path, now=clock)
    items.put(ANA, "brief", {"content": "Ana is in Porto this week."}, ttl=10)
    items.put(ANA, "kept", {"content": "Ana likes tea."})
    assert '"ttl":{"minutes":10.0,"expiresAt":"2026-01-01T00:10:00.000+00:00"}' in _records(
        tmp_path
    )
    clock.advance(9)
    assert items.get(ANA, "brief") is not None
    # A restart: a new store over the root reads the expiry from the record.
    again = ItemStore(tmp_path, now=clock)
    clock.advance(2)
    assert again.get(ANA, "brief") is None
    text = _records(tmp_path)
    assert "Porto" not in text and "brief" not in text  # forgotten: text and key erased
    statuses = [r.status for r in RecordStore(tmp_path / "memories" / "ana").snapshot().records]
    assert statuses == ["revoked", "active"]
    assert [i.key for i in again.items(("memories",))] == ["kept"]


def test_a_sweep_forgets_without_a_read_and_refresh_extends(tmp_path: Path) -> None:
    clock = Clock()
    items = ItemStore(tmp_path, now=clock)
    items.put(ANA, "a", {"content": "first"}, ttl=10)
    items.put(("memories", "bo"), "b", {"content": "second"}, ttl=10)
    clock.advance(4)
    assert items.refresh(ANA, "a") is False  # more than half left: no write
    clock.advance(3)
    assert items.refresh(ANA, "a") is True  # 3 of 10 minutes left: extended to 10 from now
    clock.advance(5)
    assert items.sweep() == 1  # b expired at 10; a now expires at 17
    assert "second" not in (tmp_path / "memories" / "bo" / "memory" / "records.md").read_text()
    assert items.get(ANA, "a") is not None
    clock.advance(6)
    assert items.sweep() == 1
    assert items.get(ANA, "a") is None


def test_the_store_takes_ttl_config_and_sweeps_on_its_own(tmp_path: Path) -> None:
    store = MemquillStore(tmp_path, ttl={"default_ttl": 0.005, "sweep_interval_minutes": 1})
    assert store.supports_ttl is True
    store.put(ANA, "brief", {"content": "gone soon"})  # default_ttl applies
    store.put(ANA, "long", {"content": "stays"}, ttl=60)
    assert '"minutes":0.005' in _records(tmp_path) and '"minutes":60' in _records(tmp_path)
    for bad in (0, -1, float("nan")):
        with pytest.raises(InvalidInputError, match="time to live"):
            store.put(ANA, "bad", {"content": "x"}, ttl=bad)
    time.sleep(0.4)
    assert store.sweep() == 1
    assert "gone soon" not in _records(tmp_path)
    assert [item.key for item in store.search(ANA)] == ["long"]
    store.close()


def test_the_sweep_thread_runs_at_its_interval(tmp_path: Path) -> None:
    # LangGraph types the interval as whole minutes; a fraction keeps the test short (0.3 s).
    store = MemquillStore(tmp_path, ttl=cast("TTLConfig", {"sweep_interval_minutes": 0.005}))
    store.put(ANA, "brief", {"content": "gone soon"}, ttl=0.002)
    deadline = time.monotonic() + 5.0
    while "gone soon" in _records(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    store.close()
    assert "gone soon" not in _records(tmp_path)
    assert store.items.expired == 1
