"""Reads across many namespaces on PostgreSQL: the namespaces of one database are read
together, in one statement whatever their number, each sending only what changed since this
process last read it, and what is read is what each namespace read on its own holds.

These are the reads of the namespaces themselves: a listing, and a search with a filter, which
ranks in the process (a search without one asks the database for its candidates:
``test_items_database_search.py``).

Statements are counted on the wire: libpq's trace of the pool's one connection (every
statement is one ``Execute`` or one simple ``Query`` message), on the test cluster.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from hypothesis import given, strategies as st
from tests.conftest import Server
from tests.core.postgres_wire import traced
from tests.core.store_helpers import manual

from memquill import RecordStore
from memquill.items import ItemStore, _store as items_store
from memquill.store import _postgres as postgres_backend
from memquill.store._postgres_location import parse_location
from memquill.store._postgres_pool import list_workspaces
from memquill.store._postgres_sql import _after  # pyright: ignore[reportPrivateUsage]
from memquill.store._results import Snapshot
from memquill.store._store import snapshots

NAMESPACES = 40


@contextmanager
def statements(url: str) -> Iterator[list[int]]:
    """How many statements the process sends to ``url``'s database in the ``with`` block, and
    how many rows it receives (its two elements, set at the end): the pool is left one
    connection, traced, and no other may be opened meanwhile (it would go uncounted)."""
    counted = [0, 0]
    with traced(url) as lines:
        yield counted
    counted[0] = sum(
        1 for line in lines if line[0] == "F" and line[2].split(" ")[0] in ("Execute", "Query")
    )
    counted[1] = sum(1 for line in lines if line[0] == "B" and line[2].startswith("DataRow"))


def _everything(value: object) -> bool:
    return True


def _hits(store: ItemStore, query: str) -> list[tuple[tuple[str, ...], str, object, float]]:
    found = store.search(("memories",), query, accept=_everything, limit=100)
    return [(hit.item.namespace, hit.item.key, hit.item.value, hit.score) for hit in found]


@pytest.mark.parametrize("whole", [False, True], ids=["looked-up", "joined-whole"])
def test_a_search_across_namespaces_is_a_constant_number_of_statements(
    tmp_path: Path, postgres_server: Server, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    monkeypatch.setattr(postgres_backend, "MANY", 1 if whole else 1_000_000)
    # A search across 10,000 namespaces sent one statement per namespace (and, in a process
    # that had not read them, three more each to check the schema): 12 of 15 s at 2,000.
    location = f"{postgres_server.url}#workspace=many-{uuid.uuid4().hex[:12]}"
    writer = ItemStore(tmp_path, store=location)
    reader = ItemStore(tmp_path, store=location)
    try:
        for n in range(NAMESPACES):
            writer.put(("memories", f"u{n}"), "pet", {"content": f"User {n} keeps a heron."})
        with statements(postgres_server.url) as cold:
            first = _hits(reader, "heron")
        assert len(first) == NAMESPACES
        with statements(postgres_server.url) as unchanged:
            again = _hits(reader, "heron")
        assert again == first
        # A search in one namespace between two across all does not make the next one read
        # them all again.
        one = reader.search(("memories", "u5"), "heron", accept=_everything)
        assert [hit.item.key for hit in one] == ["pet"]
        # Another writer changes a few namespaces: only theirs send rows, in the same statement.
        writer.put(("memories", "u3"), "pet", {"content": "User 3 keeps two herons now."})
        writer.put(("memories", "u7"), "boat", {"content": "A heron sits on user 7's boat."})
        writer.delete(("memories", "u9"), "pet")
        writer.put(("memories", "new"), "pet", {"content": "A new heron."})
        asked: list[int] = []

        def counted(stores: Sequence[RecordStore]) -> list[Snapshot]:
            asked.append(len(stores))
            return snapshots(stores)

        monkeypatch.setattr(items_store, "snapshots", counted)
        with statements(postgres_server.url) as changed:
            after = _hits(reader, "heron")
        # Only the namespaces whose rows changed are read again (the others' rows hash the
        # same as when they were read), the new one included.
        assert asked == [4]
        fresh = ItemStore(tmp_path, store=location)
        try:
            expected = _hits(fresh, "heron")
            one_by_one = [
                (namespace, item.key, item.value)
                for namespace in fresh.namespaces(("memories",))
                for item in fresh.items(namespace)
                if item.namespace == namespace
            ]
        finally:
            fresh.close()
    finally:
        writer.close()
        reader.close()
    assert after == expected
    assert sorted((n, k, v) for n, k, v, _ in after) == sorted(one_by_one)
    assert len(after) == NAMESPACES + 1  # u9's gone, u7's boat and the new namespace added
    # The listing (1 statement: its check for the schema was a second one), one read for all,
    # and the schema checked once for all when a namespace is new to the process (one
    # message: the first search, and the new namespace's; it was three statements). With
    # nothing changed, the listing alone, which answers with its mark only.
    assert (cold[0], unchanged[0], changed[0]) == (3, 1, 3), (cold, unchanged, changed)
    # Rows received: when no namespace changed, the mark (it was a name each and each
    # workspace row: 10,000 and 10,000 a search across 10,000 unchanged namespaces); after,
    # the listing's (a name each), then u3's, u7's and u9's workspace rows with their new and
    # changed versions, and the new namespace's.
    assert (unchanged[1], changed[1]) == (1, NAMESPACES + 1 + 7), (unchanged, changed)


def test_a_search_that_finds_nothing_changed_still_forgets_what_expired(
    tmp_path: Path, postgres_server: Server
) -> None:
    # Unchanged rows answer with their mark alone, and the search keeps what it read: an
    # item's time to live runs out without a write, so the clock reads the namespaces again.
    clock = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC)]
    location = f"{postgres_server.url}#workspace=expiring-{uuid.uuid4().hex[:12]}"
    store = ItemStore(tmp_path, store=location, now=lambda: clock[0])
    try:
        store.put(("memories", "u1"), "pet", {"content": "A heron for ten minutes."}, ttl=10)
        store.put(("memories", "u2"), "pet", {"content": "A heron for good."})
        first = store.search(("memories",), "heron", accept=_everything)
        assert [hit.item.namespace for hit in first] == [("memories", "u1"), ("memories", "u2")]
        with statements(postgres_server.url) as unchanged:
            store.search(("memories",), "heron", accept=_everything)
        clock[0] += timedelta(minutes=11)
        later = store.search(("memories",), "heron", accept=_everything)
        found = [hit.item.namespace for hit in later]
        assert store.expired == 1
    finally:
        store.close()
    assert unchanged[0] == 1
    assert found == [("memories", "u2")]


def _workspace(url: str, name: str) -> RecordStore:
    folder = Path(tempfile.mkdtemp(prefix="memquill-many-"))
    return RecordStore(folder, location=f"{url}#workspace={name}")


@pytest.mark.parametrize("whole", [False, True], ids=["looked-up", "joined-whole"])
def test_stores_read_together_hold_what_each_reads_on_its_own(
    tmp_path: Path, postgres_server: Server, monkeypatch: pytest.MonkeyPatch, whole: bool
) -> None:
    # Both statements: names looked up one by one (few), or joined whole (many: here, 1).
    monkeypatch.setattr(postgres_backend, "MANY", 1 if whole else 1_000_000)
    url = postgres_server.url
    base = f"together-{uuid.uuid4().hex[:12]}"
    names = [f"{base}/{n}" for n in range(5)]
    writers = [_workspace(url, name) for name in names]
    for n, store in enumerate(writers[:4]):
        store.save([manual(f"fact {n}.{i}") for i in range(3)])
    readers = [_workspace(url, name) for name in names]
    (tmp_path / "ws").mkdir()
    file_store = RecordStore(tmp_path / "ws")
    file_store.save([manual("a fact in a file")])
    readers.insert(2, file_store)
    first = snapshots(readers)
    assert [len(snapshot.records) for snapshot in first] == [3, 3, 1, 3, 3, 0]
    # Changed meanwhile: an append, a correction, the workspace's row dropped and made again
    # under its name (another id: every row of the new one is read), and the empty one written.
    writers[0].save([manual("fact 0.3")])
    target = writers[1].snapshot()
    writers[1].correct(target.records[0].id, "fact 1.0, corrected", target.revision)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("DELETE FROM memquill.workspaces WHERE workspace = %s", (names[2],))
    again = _workspace(url, names[2])
    again.save([manual("the new 2.0")])
    writers[4].save([manual("fact 4.0")])
    file_store.save([manual("another fact in a file")])
    read = snapshots(readers)
    each = [
        *(_workspace(url, name).snapshot() for name in names[:2]),
        RecordStore(tmp_path / "ws").snapshot(),
        *(_workspace(url, name).snapshot() for name in names[2:]),
    ]
    assert [snapshot.revision for snapshot in read] == [snapshot.revision for snapshot in each]
    assert [snapshot.records for snapshot in read] == [snapshot.records for snapshot in each]
    assert [len(snapshot.records) for snapshot in read] == [4, 4, 2, 1, 3, 1]
    # And read once more, unchanged: the same again.
    assert [s.revision for s in snapshots(readers)] == [s.revision for s in each]
    # A quota set by an operator changes no seq, and is read as a read on its own reads it.
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            "UPDATE memquill.workspaces SET quota_bytes = 65536 WHERE workspace = %s", (names[3],)
        )
    before = [store.capacity for store in readers]
    snapshots(readers)
    assert [store.capacity for store in readers] == [*before[:4], 65536, before[5]]


def test_a_name_without_a_row_is_made_as_its_own_read_makes_it(postgres_server: Server) -> None:
    name = f"unmade-{uuid.uuid4().hex[:12]}"
    store = _workspace(postgres_server.url, name)
    (snapshot,) = snapshots([store])
    assert snapshot.records == ()
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        found = connection.execute(
            "SELECT count(*) FROM memquill.workspaces WHERE workspace = %s", (name,)
        ).fetchone()
    assert found == (1,)


@pytest.mark.parametrize("count", [0, 1])
def test_none_or_one_store(postgres_server: Server, count: int) -> None:
    stores = [_workspace(postgres_server.url, f"few-{uuid.uuid4().hex[:12]}")][:count]
    assert [s.records for s in snapshots(stores)] == [()] * count


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


# The code points where a bound can go wrong, beside any other.
_EDGES = st.sampled_from(["a", "b", "/", "\x00", "\x7f", "é", "\ud7ff", "\ue000", chr(0x10FFFF)])
_TEXTS = st.one_of(st.text(alphabet=_EDGES, max_size=4), st.text(max_size=5))


@given(_TEXTS, _TEXTS)
def test_the_names_range_holds_exactly_the_texts_that_start_with_the_prefix(
    prefix: str, rest: str
) -> None:
    # Texts drawn as a prefix and its continuation, and on their own: the range's bounds in
    # byte order (collation "C") hold the one when it starts with the prefix, never another.
    for text in (prefix + rest, rest):
        end = _after(prefix)
        within = _utf8(prefix) <= _utf8(text) and (end is None or _utf8(text) < _utf8(end))
        assert within == text.startswith(prefix), (prefix, text, end)


def test_the_names_under_a_prefix_are_those_that_start_with_it_in_byte_order(
    postgres_server: Server,
) -> None:
    base = f"names-{uuid.uuid4().hex[:12]}"
    top = chr(0x10FFFF)
    names = [
        *(f"{base}/{tail}" for tail in ("a", "a/b", "ab", "a%2F", "é", "\ud7ff", "\ud7ffz")),
        f"{base}/\ue000",
        f"{base}/a{top}",
        f"{base}/a{top}{top}/x",
        f"{base}/b",
        base,
        f"{base}0",
        f"{base}.",
    ]
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        _workspace(postgres_server.url, base).snapshot()  # the schema, and the base's row
        connection.execute(
            "INSERT INTO memquill.workspaces (workspace, workspace_id, record_key) "
            "SELECT n, gen_random_uuid(), sha256(convert_to(n, 'UTF8')) "
            "FROM unnest(%s::text[]) AS n ON CONFLICT DO NOTHING",
            (names,),
        )
    location = parse_location(postgres_server.url)
    for prefix in (base, f"{base}/", f"{base}/a", f"{base}/a{top}", f"{base}/\ud7ff"):
        expected = sorted((name for name in names if name.startswith(prefix)), key=_utf8)
        assert list(list_workspaces(location, prefix).names or ()) == expected, prefix
    # The empty prefix lists the whole database, which other tests write at the same time:
    # it is held to byte order and to holding this test's names, not to one snapshot.
    everything = list(list_workspaces(location, "").names or ())
    assert everything == sorted(everything, key=_utf8)
    assert [name for name in everything if name.startswith(base)] == sorted(names, key=_utf8)
