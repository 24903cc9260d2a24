"""What a write on PostgreSQL costs on the wire and in memory, whatever the workspace's size.

Round trips are counted on the wire: libpq's trace of the pool's one connection, where every
wait for the server ends with its ``ReadyForQuery`` (one per simple query message, one per
``Sync`` of the extended protocol), on the test cluster.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from tests.conftest import Server
from tests.core.postgres_wire import traced
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.items import ItemStore
from memquill.items._store import ItemPut
from memquill.store._postgres import PostgresBackend


@contextmanager
def round_trips(url: str) -> Iterator[list[int]]:
    """How many times the process waits for ``url``'s database in the ``with`` block (its one
    element, set at the end): the pool is left one connection, traced, and no other may be
    opened meanwhile (it would go uncounted)."""
    counted = [0]
    with traced(url) as lines:
        yield counted
    counted[0] = sum(
        1 for line in lines if line[0] == "B" and line[2].lstrip().startswith("ReadyForQuery")
    )


def _backend(store: RecordStore) -> PostgresBackend:
    backend = store._backend  # pyright: ignore[reportPrivateUsage]
    assert isinstance(backend, PostgresBackend)
    return backend


def test_a_write_is_one_round_trip_and_a_put_two(tmp_path: Path, postgres_server: Server) -> None:
    # A write was six (BEGIN, lock_timeout, the lock, the insert, the workspace row, COMMIT),
    # holding the workspace row for four of them; a put, seven. Then two: the lock and the
    # rows changed since, then the append and COMMIT (a put three). An append now runs on the
    # rows held, checked in the server against what was written since, in one message.
    location = f"{postgres_server.url}#workspace=trips-{uuid.uuid4().hex[:12]}"
    store = RecordStore(tmp_path, location=location)
    store.save([manual(f"fact {n}") for n in range(20)])
    with round_trips(postgres_server.url) as write:
        saved = store.save([manual("one more fact")])
    assert saved.status == "saved"
    (tmp_path / "items").mkdir()
    items = ItemStore(tmp_path / "items", store=location)
    try:
        items.put(("memories",), "first", {"content": "the first item"})
        with round_trips(postgres_server.url) as put:
            items.put(("memories",), "second", {"content": "the second item"})
        assert [item.key for item in items.items(("memories",))] == ["second", "first"]
    finally:
        items.close()
    fresh = RecordStore(tmp_path, location=location).snapshot()
    assert fresh.revision == saved.revision
    assert [r.content for r in fresh.records][-1] == "one more fact"
    assert (write[0], put[0]) == (1, 2), (write, put)


def test_a_process_first_put_into_a_namespace_is_two_or_four_round_trips(
    tmp_path: Path, postgres_server: Server
) -> None:
    # A first put of a process into a namespace that exists was eleven (the schema's check in
    # three, the read, the record key, the write in six), then three; into a new one,
    # thirteen (the read, the row made, the read again), then four.
    location = f"{postgres_server.url}#workspace=first-{uuid.uuid4().hex[:12]}"
    (tmp_path / "items").mkdir()
    earlier = ItemStore(tmp_path / "items", store=location)
    try:
        earlier.put(("memories", "kept"), "first", {"content": "the first item"})
    finally:
        earlier.close()
    items = ItemStore(tmp_path / "items", store=location)
    try:
        with round_trips(postgres_server.url) as existing:
            items.put(("memories", "kept"), "second", {"content": "the second item"})
        with round_trips(postgres_server.url) as new:
            items.put(("memories", "new"), "first", {"content": "a new namespace's item"})
        kept = [(item.key, item.value) for item in items.items(("memories", "kept"))]
        made = [(item.key, item.value) for item in items.items(("memories", "new"))]
    finally:
        items.close()
    assert kept == [
        ("second", {"content": "the second item"}),
        ("first", {"content": "the first item"}),
    ]
    assert made == [("first", {"content": "a new namespace's item"})]
    assert (existing[0], new[0]) == (2, 4), (existing, new)


def test_a_batch_put_is_one_round_trip_and_a_first_one_two_or_four(
    tmp_path: Path, postgres_server: Server
) -> None:
    # A LangGraph store's put is a batch of one (``put_many``): it writes without reading
    # first, but asks for the record key, which a new process fetched on its own after three
    # statements checking the schema. It was six round trips, then two; a process's first into
    # a namespace eleven, then three; into a new one thirteen, then four.
    location = f"{postgres_server.url}#workspace=batch-{uuid.uuid4().hex[:12]}"
    (tmp_path / "items").mkdir()
    earlier = ItemStore(tmp_path / "items", store=location)
    try:
        earlier.put_many([ItemPut(("memories", "kept"), "first", {"content": "the first"})])
        with round_trips(postgres_server.url) as warm:
            earlier.put_many([ItemPut(("memories", "kept"), "second", {"content": "the second"})])
    finally:
        earlier.close()
    items = ItemStore(tmp_path / "items", store=location)
    try:
        with round_trips(postgres_server.url) as existing:
            items.put_many([ItemPut(("memories", "kept"), "third", {"content": "the third"})])
        with round_trips(postgres_server.url) as new:
            items.put_many([ItemPut(("memories", "new"), "first", {"content": "a new one"})])
        kept = [item.key for item in items.items(("memories", "kept"))]
        made = [item.key for item in items.items(("memories", "new"))]
    finally:
        items.close()
    assert (kept, made) == (["third", "second", "first"], ["first"])
    assert (warm[0], existing[0], new[0]) == (1, 2, 4), (warm, existing, new)


def test_a_write_extends_the_rows_held_without_copying_them(
    tmp_path: Path, postgres_server: Server
) -> None:
    # Every write copied every row held into a new tuple (1.5 ms a put at 100,000 rows), and
    # every catch-up with another writer's rows copied them into a new list.
    location = f"{postgres_server.url}#workspace=rows-{uuid.uuid4().hex[:12]}"
    store = RecordStore(tmp_path, location=location)
    other = RecordStore(tmp_path, location=location)
    store.save([manual(f"fact {n}") for n in range(40)])
    store.save([manual(f"fact {n}") for n in range(40, 50)])
    held = _backend(store)._loaded.rows  # pyright: ignore[reportPrivateUsage]
    first = held[0]
    store.save([manual("appended by this store")])
    other.save([manual("appended by another")])
    store.snapshot()  # takes in the other's row
    store.save([manual("appended after it")])
    rows = _backend(store)._loaded.rows  # pyright: ignore[reportPrivateUsage]
    assert rows is held and rows[0] is first
    assert [row.content for row in rows[50:]] == [
        "appended by this store",
        "appended by another",
        "appended after it",
    ]
    # And what it holds is what a store that never held anything reads.
    reader = RecordStore(tmp_path, location=location)
    assert store.snapshot().revision == reader.snapshot().revision
    read = _backend(reader)._loaded.rows  # pyright: ignore[reportPrivateUsage]
    assert [row.block for row in rows] == [row.block for row in read]


def test_a_batch_put_correcting_an_item_is_one_round_trip_marking_what_it_supersedes(
    tmp_path: Path, postgres_server: Server
) -> None:
    # The superseded version is updated by its id, in a statement after the append's own, in
    # the same message: the append's function found it by hashing every version of the
    # workspace. Its row is marked only if the append was granted, with the append's seq.
    location = f"{postgres_server.url}#workspace=fix-{uuid.uuid4().hex[:12]}"
    (tmp_path / "items").mkdir()
    namespace = ("memories", "kept")
    items = ItemStore(tmp_path / "items", store=location)
    try:
        items.put_many([ItemPut(namespace, f"k{n}", {"content": f"fact {n}"}) for n in range(20)])
        items.put_many([ItemPut(namespace, "k3", {"content": "fact three, corrected"})])
        with round_trips(postgres_server.url) as corrected:
            items.put_many([ItemPut(namespace, "k3", {"content": "fact three, again"})])
        found = items.get(namespace, "k3")
    finally:
        items.close()
    assert found is not None and found.value == {"content": "fact three, again"}
    assert corrected[0] == 1, corrected
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        rows = connection.execute(
            "SELECT v.status, v.key, v.changed, w.seq FROM memquill.versions v"
            " JOIN memquill.workspaces w USING (workspace_id)"
            " WHERE w.workspace = %s AND v.content LIKE 'fact three%%' ORDER BY v.position",
            (f"{location.split('#workspace=')[1]}/memories/kept",),
        ).fetchall()
    seq = rows[0][3]
    assert [row[:3] for row in rows] == [
        ("superseded", "k3", seq),
        ("active", "k3", seq),
    ], rows


def test_a_first_read_takes_its_rows_in_without_collection(
    tmp_path: Path, postgres_server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new process's first read takes in every row of the workspace (100,000 at a time):
    # many objects and no cycles, which the collector walked again and again.
    location = f"{postgres_server.url}#workspace=gc-{uuid.uuid4().hex[:12]}"
    RecordStore(tmp_path, location=location).save([manual(f"fact {n}") for n in range(5)])
    taken = PostgresBackend._took  # pyright: ignore[reportPrivateUsage]
    seen: list[bool] = []

    def took(backend: PostgresBackend, found: Sequence[Sequence[object]], since: int) -> bool:
        seen.append(gc.isenabled())
        return taken(backend, found, since)

    monkeypatch.setattr(PostgresBackend, "_took", took)
    enabled = gc.isenabled()
    gc.enable()
    try:
        assert len(RecordStore(tmp_path / "fresh", location=location).snapshot().records) == 5
        assert gc.isenabled()
    finally:
        if not enabled:
            gc.disable()
    assert seen and not any(seen)
