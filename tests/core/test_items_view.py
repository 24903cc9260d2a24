"""A namespace's items at a new revision are the last view patched with the records that
changed, and the patched view is the one a full read of the revision gives: the same items in
the same order, first saves, expiries, documents and search results, whatever the writes in
between (puts, corrections, deletes, time to live, keys moved from one fact to another, facts
whose key is no item's, other writers, large batches). On files always; on PostgreSQL with the
test server."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from tests.conftest import Server

from memquill import MemorySession, Record, WriteSource, remember
from memquill.items import ItemStore
from memquill.items._space import Space, View, fact_key
from memquill.items._store import ItemPut
from memquill.items._values import encode_value
from memquill.query._documents import SearchDocument
from memquill.store._record import FactKey
from memquill.store._record_list import RecordList
from memquill.store._results import Snapshot

NS = ("memories", "ana")
KEYS = ("a", "b/c", "d e", "ü", "x//y", "100%")
TEXTS = ("heron by the lake", "the heron flies", "coffee at dawn", "lake coffee heron")
QUERY = "heron lake coffee"

Op = tuple[object, ...]
OPS: st.SearchStrategy[Op] = st.one_of(
    st.tuples(
        st.just("put"),
        st.integers(0, len(KEYS) - 1),
        st.integers(0, len(TEXTS) - 1),
        st.sampled_from((None, None, 1.0, 5.0)),
    ),
    st.tuples(st.just("delete"), st.integers(0, len(KEYS) - 1)),
    st.tuples(st.just("move"), st.integers(0, len(KEYS) - 1), st.integers(0, len(KEYS) - 1)),
    st.tuples(st.just("other"), st.integers(0, len(KEYS) - 1), st.integers(0, len(TEXTS) - 1)),
    st.tuples(st.just("foreign"), st.integers(0, len(TEXTS) - 1)),
    st.tuples(st.just("many"), st.integers(1, 40)),
    st.tuples(st.just("tick"), st.integers(1, 6)),
)


@pytest.fixture(params=["file", "postgres"])
def location(request: pytest.FixtureRequest) -> Callable[[], str | None]:
    """Where each example's store lives: a new folder's files, or a new database workspace."""
    if request.param == "file":
        return lambda: None
    server: Server = request.getfixturevalue("postgres_server")
    return lambda: f"{server.url}#workspace=view-{uuid.uuid4().hex[:12]}"


def _documents(documents: dict[str, SearchDocument]) -> list[tuple[object, ...]]:
    return [
        (key, d.path, d.content, d.source, d.kind, d.record_id, d.record_revision, d.key)
        for key, d in documents.items()
    ]


def _check(store: ItemStore, fresh: ItemStore) -> View:
    """The store's view of the current revision (patched, most often) against a full read of
    it, then the store's answers against those of a store that never read it before."""
    space = store._space(NS)  # pyright: ignore[reportPrivateUsage]
    snapshot = space.session.store.snapshot()
    view = space.view(snapshot)
    whole = Space(space.namespace, space.folder, space.session)
    full = whole.view(snapshot)
    assert list(view.items.items()) == list(full.items.items())
    assert list(view.records.items()) == list(full.records.items())
    assert view.firsts == full.firsts and view.soonest == full.soonest
    assert _documents(space.documents(view)) == _documents(whole.documents(full))
    hits = [(hit.item, hit.score) for hit in store.search(NS, QUERY, limit=50)]
    assert hits == [(hit.item, hit.score) for hit in fresh.search(NS, QUERY, limit=50)]
    for key in KEYS:
        assert store.get(NS, key) == fresh.get(NS, key)
    return view


def _apply(op: Op, store: ItemStore, other: ItemStore, serial: int) -> None:
    kind = op[0]
    space = store._space(NS)  # pyright: ignore[reportPrivateUsage]
    records = space.session.store
    if kind == "put":
        _, key, text, ttl = op
        assert isinstance(key, int) and isinstance(text, int)
        ttl_minutes = ttl if isinstance(ttl, float) else None
        store.put(NS, KEYS[key], {"content": f"{TEXTS[text]} {serial}"}, ttl=ttl_minutes)
    elif kind == "delete":
        assert isinstance(op[1], int)
        store.delete(NS, KEYS[op[1]])
    elif kind == "move":  # the fact of one key takes another key (its holder forgotten first)
        _, source, target = op
        assert isinstance(source, int) and isinstance(target, int)
        if source == target or records.snapshot().by_key(fact_key(KEYS[source])) is None:
            return
        store.delete(NS, KEYS[target])
        snapshot = records.snapshot()
        current = snapshot.by_key(fact_key(KEYS[source]))
        assert current is not None
        records.correct(
            FactKey(fact_key(KEYS[source])),
            current.content,
            snapshot.record_revision(current),
            key=fact_key(KEYS[target]),
        )
    elif kind == "other":  # another store object (another process) writes
        _, key, text = op
        assert isinstance(key, int) and isinstance(text, int)
        other.put(NS, KEYS[key], {"content": f"{TEXTS[text]} other {serial}"})
    elif kind == "foreign":  # a fact whose key no item has (its own slash quoted)
        assert isinstance(op[1], int)
        store.put(NS, "seed", {"content": f"seed {serial}"})  # the workspace exists
        remember(
            space.session,
            f"{TEXTS[op[1]]} foreign {serial}",
            source=WriteSource("tool", session_id="test"),
            idempotency_key=f"foreign-{serial}",
            key=f"prefs%2F{serial}",
        )
    elif kind == "many":  # more changes than a patch takes: a full read
        assert isinstance(op[1], int)
        store.put_many(
            ItemPut(NS, f"bulk/{serial}/{n}", {"content": f"heron bulk {n}"}) for n in range(op[1])
        )


def _count_patches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many views were made by patching the last one (its one element)."""
    counted = [0]
    patched = Space._patched  # pyright: ignore[reportPrivateUsage]

    def counting(space: Space, last: View, snapshot: Snapshot) -> View | None:
        view = patched(space, last, snapshot)
        counted[0] += view is not None
        return view

    monkeypatch.setattr(Space, "_patched", counting)
    return counted


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(OPS, min_size=1, max_size=14))
def test_a_patched_view_is_the_full_read_of_its_revision(
    location: Callable[[], str | None], monkeypatch: pytest.MonkeyPatch, ops: list[Op]
) -> None:
    patches = _count_patches(monkeypatch)
    clock = [datetime(2026, 12, 1, tzinfo=UTC)]
    where = location()
    with tempfile.TemporaryDirectory() as folder:
        stores = [ItemStore(folder, store=where, now=lambda: clock[0]) for _ in range(2)]
        store, other = stores
        changed = 0  # steps that changed the revision, but for a batch read whole
        try:
            store.put(NS, "first", {"content": "heron first"})
            last = _check(store, ItemStore(folder, store=where, now=lambda: clock[0]))
            for serial, op in enumerate(ops):
                if op[0] == "tick":
                    assert isinstance(op[1], int)
                    clock[0] += timedelta(minutes=op[1])
                else:
                    _apply(op, store, other, serial)
                fresh = ItemStore(folder, store=where, now=lambda: clock[0])
                view = _check(store, fresh)
                changed += view.snapshot.revision != last.snapshot.revision and op[0] != "many"
                last = view
        finally:
            for each in stores:
                each.close()
        # The patch is what was compared (not every step is one: a batch is read whole).
        assert patches[0] or not changed


def _items(store: ItemStore) -> Iterator[ItemPut]:
    for n in range(400):
        yield ItemPut(NS, f"k{n}", {"content": f"heron number {n} by the lake"})


@pytest.mark.parametrize("changed", [1, 3, 8])
def test_a_revision_that_appends_k_versions_looks_at_about_k_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, changed: int
) -> None:
    """After a write of ``changed`` puts (each a correction: a version appended, the one it
    supersedes marked), the view, its documents and the term index of the new revision look
    at the records that changed, not at the 400 items' (reads of a record's key counted)."""
    store = ItemStore(tmp_path)
    store.put_many(_items(store))
    store.search(NS, "heron")  # the view, documents and term index of this revision
    space = store._space(NS)  # pyright: ignore[reportPrivateUsage]
    store.put_many(
        ItemPut(NS, f"k{n * 7}", {"content": f"heron moved {n} away"}) for n in range(changed)
    )
    snapshot = space.session.store.snapshot()
    getter = Record.key.fget
    assert getter is not None
    reads = [0]

    def counted(record: Record) -> str | None:
        reads[0] += 1
        return getter(record)

    monkeypatch.setattr(Record, "key", property(counted))
    view = space.view(snapshot)
    space.terms(view)
    monkeypatch.undo()
    # Each changed put: the superseded version (before and after), the new one, its document.
    assert reads[0] <= 4 * changed + 4, reads[0]
    whole = Space(space.namespace, space.folder, space.session)
    assert list(view.items.items()) == list(whole.view(snapshot).items.items())
    hits = store.search(NS, "heron moved", limit=changed)
    assert sorted(hit.item.key for hit in hits) == sorted(f"k{n * 7}" for n in range(changed))


def _version(number: int, key: str, extra: Mapping[str, object] | None = None) -> Record:
    stamp = f"2026-12-01T00:00:0{number}.000Z"
    meta: dict[str, object] = {"id": f"id-{number}", "rootId": f"id-{number}", "status": "active"}
    meta.update(source={"kind": "tool"}, createdAt=stamp, updatedAt=stamp, key=key)
    if extra is not None:
        meta["extra"] = extra
    return Record(meta, f"text {number}")  # pyright: ignore[reportArgumentType]


def test_a_key_two_active_versions_hold_is_read_whole_with_its_last_versions_expiry(
    tmp_path: Path,
) -> None:
    """A snapshot where two active versions hold one key (none memquill writes): the item is
    the last version's, so is its expiry (none), and the next revision is read whole too."""
    _, extra = encode_value({"content": "x"}, None, (5.0, datetime(2026, 12, 2, tzinfo=UTC)))
    first = RecordList((_version(1, "k", extra), _version(2, "k")))
    space = Space(NS, tmp_path, MemorySession(tmp_path))
    view = space.view(Snapshot(b"store", "r1", first, 0))
    assert view.items["k"].expiry is None and view.soonest is None and not view.patchable
    later = Snapshot(b"store", "r2", first.extended((_version(3, "other"),)), 0)
    again = space.view(later)
    full = Space(NS, tmp_path, MemorySession(tmp_path)).view(later)
    assert list(again.items.items()) == list(full.items.items())
    assert again.soonest is None and not again.patchable
