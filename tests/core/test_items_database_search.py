"""A search of a database's items with candidates from the database itself
(:mod:`memquill.items._database_search`, :mod:`memquill.store._postgres_search`).

The contract: the same hits, order and scores as ranking every item in the process (the
search with a filter that takes every item still ranks in the process, so the two are
compared side by side on the same store), whatever the items, their ties and their chunks;
kept current by the searches themselves, analysing only what changed; never reading a
namespace whole.
"""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings, strategies as st
from psycopg import sql
from tests.conftest import Server
from tests.core.test_items_postgres import statements

from memquill.items import ItemStore, _database_search, _store as items_store
from memquill.items._database_search import ANALYSIS, analysed
from memquill.items._paths import namespace_of_row
from memquill.items._space import stored_item
from memquill.query._database import tie_text
from memquill.query._rank import RankParams
from memquill.store import _postgres_search as postgres_search
from memquill.store._postgres_search import ChangedVersion, IndexedDocument

WORDS = ("heron", "harbour", "deploy", "coffee", "tea", "river", "boat", "green", "Anna")
LABELS = ("u1", "u10", "a", "a-b", "a b", "ä", "A", "z")
"""Labels whose order as tuples is not their folders' order as text ("a" < "a-b" < "a b"...)."""


def _everything(value: Any) -> bool:
    return True


def _side_by_side(
    store: ItemStore, prefix: tuple[str, ...], query: str, limit: int, offset: int
) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The database's answer and the process's (a filter taking every item ranks there)."""
    database = store.search(prefix, query, limit=limit, offset=offset)
    process = store.search(prefix, query, accept=_everything, limit=limit, offset=offset)
    return (
        [(hit.item.namespace, hit.item.key, hit.item.value, hit.score) for hit in database],
        [(hit.item.namespace, hit.item.key, hit.item.value, hit.score) for hit in process],
    )


def _refuse_whole_reads(monkeypatch: pytest.MonkeyPatch, store: ItemStore) -> None:
    """Make ``store`` fail if it reads a namespace whole (its views: every item decoded)."""

    def refused(*args: object) -> object:
        raise AssertionError("a namespace was read whole")

    monkeypatch.setattr(store, "_read", refused)
    monkeypatch.setattr(store, "_views", refused)


def _folder(path: Path) -> Path:
    path.mkdir()
    return path


def _text(rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
    shape = rng.randint(0, 5)
    if shape == 0:
        return f"Anna: {words}"  # a label: the record's title field holds its words
    if shape == 1:
        return f"# {rng.choice(WORDS)}\n\n{words}\n\n## more\n\n{words} {words}"  # headings
    if shape == 2:
        return (words + " filler") * 160  # longer than one chunk
    return words


def _random_namespaces(writer: ItemStore, rng: random.Random, count: int, per: int) -> list[str]:
    """``count`` namespaces ``("memories", "u<n>")`` of ``per`` items of random text; their
    labels."""
    labels = [f"u{n}" for n in range(count)]
    for label in labels:
        for key in range(per):
            writer.put(("memories", label), f"k{key}", {"content": _text(rng)})
    return labels


@pytest.fixture(autouse=True)
def database_searches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search here asks the database, however few the records (see the test of the
    bound itself below)."""
    monkeypatch.setattr(items_store, "DATABASE_SEARCH", 0)


@pytest.fixture
def location(postgres_server: Server) -> str:
    return f"{postgres_server.url}#workspace=dbsearch-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def store(tmp_path: Path, location: str) -> Iterator[ItemStore]:
    made = ItemStore(tmp_path, store=location)
    yield made
    made.close()


def test_the_database_ranks_as_the_process_ranks_every_item(
    store: ItemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    needed: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    real = _database_search.needed_terms  # pyright: ignore[reportPrivateImportUsage]

    def kept(*args: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
        needed.append(real(*args))
        return needed[-1]

    monkeypatch.setattr(_database_search, "needed_terms", kept)
    rng = random.Random(7)
    for index in range(160):
        namespace = ("memories", rng.choice(LABELS), *rng.choice(((), ("deep",))))
        key = rng.choice(("k", "K", "k-1", "k 1", "ä", f"k{index % 23}", "k/1"))
        store.put(namespace, key, {"content": _text(rng)})
    for _ in range(40):
        store.delete(("memories", rng.choice(LABELS)), rng.choice(("k", "K", "k-1")))
    compared = 0
    for round_ in range(60):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        if round_ % 7 == 0:
            query += " memory records"  # every item's path holds these: all alike on them
        prefix = ("memories",) if round_ % 3 else ("memories", rng.choice(LABELS))
        limit, offset = rng.choice(((10, 0), (3, 2), (100, 0), (1, 5)))
        database, process = _side_by_side(store, prefix, query, limit, offset)
        assert database == process, (prefix, query, limit, offset)
        compared += len(database)
    assert compared > 300  # the comparison saw real hits, not empty lists
    # Every way of asking was taken: terms an item must hold all of, terms left out as weak
    # (the path's "memory" and "records" are in every item), and neither.
    assert any(required for _, required in needed)
    assert any(not required and len(essential) < 3 for essential, required in needed)
    _check_holders(store)


def _compact(store: ItemStore, labels: list[str]) -> int:
    """Delete the superseded versions' rows of the namespaces ``("memories", label)``, as a
    compaction does (their documents go with them, uncounted: the next catch-up counts those
    namespaces again); how many went."""
    location = store._location  # pyright: ignore[reportPrivateUsage]
    names = [f"{store._base}/memories/{label}" for label in labels]  # pyright: ignore[reportPrivateUsage]
    with psycopg.connect(location.split("#", 1)[0], autocommit=True) as connection:
        return connection.execute(
            "DELETE FROM memquill.versions v USING memquill.workspaces w "
            "WHERE v.workspace_id = w.workspace_id AND w.workspace = ANY(%s) "
            "AND v.status = 'superseded'",
            (names,),
        ).rowcount


def test_many_namespaces_behind_at_once_are_caught_up_together_and_rank_alike(
    pair: tuple[ItemStore, ItemStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between searches, 44 of 48 namespaces change (new items, corrections, forgotten items;
    # in one round the superseded versions of three are deleted): each search catches all of
    # them up together, 16 to a transaction, and still ranks as ranking every item does.
    monkeypatch.setattr(postgres_search, "_CHUNK", 16)
    chunks: list[int] = []
    real = postgres_search._catch_up  # pyright: ignore[reportPrivateUsage]

    def counted(*args: Any) -> list[str]:
        chunks.append(len(args[1]))
        return real(*args)

    monkeypatch.setattr(postgres_search, "_catch_up", counted)
    writer, reader = pair
    rng = random.Random(11)
    labels = _random_namespaces(writer, rng, 48, 4)
    compared = 0
    for round_ in range(5):
        for label in rng.sample(labels, 44):
            key = f"k{rng.randint(0, 5)}"
            if rng.random() < 0.3:
                writer.delete(("memories", label), key)
            else:
                writer.put(("memories", label), key, {"content": _text(rng)})
        if round_ == 3:
            assert _compact(writer, ["u1", "u2", "u3"]) > 0
        chunks.clear()
        for query in ("heron", "deploy coffee", "Anna green boat", "tea memory"):
            database, process = _side_by_side(reader, ("memories",), query, 20, 0)
            assert database == process, (round_, query)
            compared += len(database)
        # Every namespace behind in one search: chunks of 16 (the last one shorter), then
        # none is behind for the next queries.
        assert len(chunks) >= 3 and max(chunks) == 16 and sum(chunks) >= 40, chunks
    assert compared > 200
    _check_holders(reader)


def _heron_keepers(writer: ItemStore, reader: ItemStore, count: int) -> None:
    """``count`` namespaces of one item each, their search documents brought in by a search."""
    for n in range(count):
        writer.put(("memories", f"u{n}"), "pet", {"content": f"User {n} keeps a heron."})
    reader.search(("memories",), "heron")


def test_a_catch_up_of_many_namespaces_is_a_constant_number_of_statements(
    pair: tuple[ItemStore, ItemStore], postgres_server: Server
) -> None:
    writer, reader = pair
    _heron_keepers(writer, reader, 41)
    counts: list[int] = []
    for behind in (range(1), range(1, 41)):
        for n in behind:  # a correction: the old version's terms lose a holder, some all
            writer.put(("memories", f"u{n}"), "pet", {"content": f"User {n} keeps two boats."})
        with statements(postgres_server.url) as changed:
            assert len(reader.search(("memories",), "heron boats", limit=50)) == 41
        counts.append(changed[0])
    # The listing, the figures that find them behind, their catch-up together (their state
    # rows, the versions changed since, and one transaction: begin, lock, the documents
    # removed and written, the terms' holders and the terms left with none, the states
    # moved, commit), and the figures and candidates again: for one namespace as for 40.
    assert counts == [1 + 1 + 2 + 9 + 2] * 2, counts


def test_catch_ups_of_overlapping_namespaces_at_once_agree(
    pair: tuple[ItemStore, ItemStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four threads catch up overlapping sets of namespaces, in different orders, at once
    # (chunks of 7: each thread's chunks overlap the others' differently); a fifth reads
    # first and writes last, after all of them moved its namespaces on. The counts of
    # holders are the documents' afterwards, and every namespace stands at its seq.
    monkeypatch.setattr(postgres_search, "_CHUNK", 7)
    writer, reader = pair
    rng = random.Random(5)
    labels = _random_namespaces(writer, rng, 30, 3)
    reader.search(("memories",), "heron")  # documents to remove and count down later
    for label in labels:
        writer.put(("memories", label), "k1", {"content": _text(rng)})  # corrected
        writer.put(("memories", label), "k9", {"content": _text(rng)})
        if rng.random() < 0.3:
            writer.delete(("memories", label), "k0")
    assert _compact(writer, ["u4", "u17"]) > 0
    base = writer._base  # pyright: ignore[reportPrivateUsage]
    location = writer._location  # pyright: ignore[reportPrivateUsage]
    names = [f"{base}/memories/{label}" for label in labels]

    def tied(name: str) -> tuple[str, str]:
        return name, tie_text(namespace_of_row(base, name) or ())

    sets = [names[:20], names[10:][::-1], names[::2] + names[1::2], rng.sample(names, 25)]
    reading, done = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def late(version: ChangedVersion) -> IndexedDocument | None:
        reading.set()
        done.wait(60)  # read first, written only once the others moved its namespaces on
        return analysed(version)

    def catch_up(workspaces: list[str], analyse: Any) -> None:
        try:
            postgres_search.catch_up_searches(
                location, [tied(n) for n in workspaces], analyse, ANALYSIS
            )
        except BaseException as error:  # reported below, with the thread's own failure
            failures.append(error)

    slow = threading.Thread(target=catch_up, args=(names, late))
    slow.start()
    assert reading.wait(60)
    threads = [threading.Thread(target=catch_up, args=(chosen, analysed)) for chosen in sets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    slow.join()
    assert failures == []
    _check_holders(reader)
    with psycopg.connect(location.split("#", 1)[0]) as connection:
        behind = connection.execute(
            "SELECT w.workspace, s.seq, w.seq, s.documents, (SELECT count(*) "
            "FROM memquill.search_documents d WHERE d.workspace_id = w.workspace_id) "
            "FROM memquill.workspaces w JOIN memquill.search_state s USING (workspace_id) "
            "WHERE w.workspace = ANY(%s) AND (s.seq <> w.seq OR s.documents <> (SELECT "
            "count(*) FROM memquill.search_documents d WHERE d.workspace_id = w.workspace_id))",
            (names,),
        ).fetchall()
    assert behind == []
    for query in ("heron", "deploy coffee", "Anna green boat"):
        # The writer's process holds every namespace's rows (the rows deleted here behind
        # its back leave a gap a process reading them first refuses).
        database, process = _side_by_side(writer, ("memories",), query, 20, 0)
        assert database == process


def test_a_catch_up_that_finds_another_moved_a_namespace_not_as_far_reads_it_again(
    pair: tuple[ItemStore, ItemStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One reader reads two namespaces and waits; they change; a second reader reads them
    # (further on) and waits for the first to write: the second finds their documents moved,
    # but not as far as it read, so it reads them again and brings them the rest of the way.
    writer, reader = pair
    for label in ("u1", "u2"):
        for key in range(3):
            writer.put(("memories", label), f"k{key}", {"content": f"heron {label} {key}"})
    reader.search(("memories",), "heron")  # documents for the writes below to change
    writer.put(("memories", "u1"), "k0", {"content": "a boat now"})
    base = writer._base  # pyright: ignore[reportPrivateUsage]
    location = writer._location  # pyright: ignore[reportPrivateUsage]
    tied = [(f"{base}/memories/{label}", tie_text(("memories", label))) for label in ("u1", "u2")]
    read, go = threading.Event(), threading.Event()
    failures: list[BaseException] = []

    def early(version: ChangedVersion) -> IndexedDocument | None:
        read.set()
        go.wait(60)
        return analysed(version)

    def first() -> None:
        try:
            postgres_search.catch_up_searches(location, tied, early, ANALYSIS)
        except BaseException as error:  # reported below, with the thread's own failure
            failures.append(error)

    ahead = threading.Thread(target=first)
    ahead.start()
    assert read.wait(60)
    writer.put(("memories", "u1"), "k1", {"content": "a green boat"})
    writer.delete(("memories", "u2"), "k2")
    writer.put(("memories", "u2"), "k7", {"content": "tea by the river"})

    def late(version: ChangedVersion) -> IndexedDocument | None:
        if not go.is_set():  # read: now the first reader writes what it read
            go.set()
            ahead.join(60)
        return analysed(version)

    again: list[list[str]] = []
    real = postgres_search._catch_up  # pyright: ignore[reportPrivateUsage]

    def attempt(*args: Any) -> list[str]:
        again.append(real(*args))
        return again[-1]

    monkeypatch.setattr(postgres_search, "_catch_up", attempt)
    postgres_search.catch_up_searches(location, tied, late, ANALYSIS)
    assert failures == []
    # u1 read again (u2 was not behind when the first reader read: the second wrote it).
    assert again == [[tied[0][0]], []]
    _check_holders(reader, least=10)
    for query in ("heron", "boat", "tea river"):
        database, process = _side_by_side(writer, ("memories",), query, 20, 0)
        assert database == process


def test_documents_another_analysis_made_are_counted_again_before_a_search(
    store: ItemStore, location: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another analysis (an older memquill, another stemmer library) made every document:
    # here one that kept none of the text's words. The search counts each namespace again
    # with its own analysis rather than searching those terms.
    for n in range(30):
        store.put(("memories", f"u{n % 4}"), f"k{n}", {"content": f"heron {n} by the river"})

    def blind(version: ChangedVersion) -> IndexedDocument | None:
        document = analysed(version)
        return None if document is None else replace(document, counts={"zzz": 1})

    with monkeypatch.context() as patched:
        patched.setattr(_database_search, "analysed", blind)
        patched.setattr(_database_search, "ANALYSIS", "another analysis")
        assert store.search(("memories",), "heron river") == []
    assert _blind_documents(location) == 30
    analysed_now: list[str] = []

    def counted(version: ChangedVersion) -> IndexedDocument | None:
        analysed_now.append(version.id)
        return analysed(version)

    monkeypatch.setattr(_database_search, "analysed", counted)
    database, process = _side_by_side(store, ("memories",), "heron river", 50, 0)
    assert database == process and len(database) == 30
    assert len(analysed_now) == 30  # every version again, each once
    assert _blind_documents(location) == 0
    _check_holders(store, least=30)


def _blind_documents(location: str) -> int:
    """How many documents under ``location``'s workspaces hold only the blind analysis' term."""
    url, _, options = location.partition("#workspace=")
    with psycopg.connect(url) as connection:
        found = connection.execute(
            "SELECT count(*) FROM memquill.search_documents d JOIN memquill.workspaces w "
            "ON w.workspace_id = d.workspace_id WHERE w.workspace LIKE %s AND d.terms = '{zzz}'",
            (options + "/%",),
        ).fetchone()
    assert found is not None
    return int(found[0])


def test_a_catch_up_ended_by_a_deadlock_starts_again(
    pair: tuple[ItemStore, ItemStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer deleting versions (compaction) and a chunk's catch-up can lock rows in opposite
    # orders; the server ends one transaction. Twice in a row, the search failed with
    # `storage` (the pool runs the work again once, on a new connection, as after a lost
    # one); the chunk now starts again on its connection, up to its attempts.
    writer, reader = pair
    labels = _random_namespaces(writer, random.Random(13), 12, 3)
    real = postgres_search._catch_up  # pyright: ignore[reportPrivateUsage]
    ended: list[int] = []

    def deadlocked(connection: psycopg.Connection[Any], *args: Any) -> list[str]:
        if len(ended) < 2:
            ended.append(1)
            with connection.transaction():
                connection.execute("SET LOCAL synchronous_commit = off")
                raise psycopg.errors.DeadlockDetected("deadlock detected")
        return real(connection, *args)

    monkeypatch.setattr(postgres_search, "_catch_up", deadlocked)
    hits = 0
    for query in ("heron", "tea river"):
        database, process = _side_by_side(reader, ("memories",), query, 50, 0)
        assert database == process
        hits += len(database)
    assert ended == [1, 1] and hits > 0 and len(labels) == 12
    _check_holders(reader, least=12)


def _check_holders(store: ItemStore, least: int = 50) -> None:
    """Each term's count of holders per workspace is what the documents hold."""
    location = store._location  # pyright: ignore[reportPrivateUsage]
    under = (store._base + "/%",)  # pyright: ignore[reportPrivateUsage]
    with psycopg.connect(location.split("#", 1)[0]) as connection:
        kept = connection.execute(
            "SELECT t.workspace_id, t.term, t.holders FROM memquill.search_terms t "
            "JOIN memquill.workspaces w USING (workspace_id) WHERE w.workspace LIKE %s "
            "ORDER BY 1, 2",
            under,
        ).fetchall()
        counted = connection.execute(
            "SELECT d.workspace_id, t.term, count(*)::integer FROM memquill.search_documents d "
            "JOIN memquill.workspaces w USING (workspace_id), unnest(d.terms) AS t(term) "
            "WHERE w.workspace LIKE %s GROUP BY 1, 2 ORDER BY 1, 2",
            under,
        ).fetchall()
        # The bounds hold every holder's counts: the most at least, the least at most.
        loose = connection.execute(
            "WITH c AS (SELECT d.workspace_id, t.term, d.counts -> t.term AS c "
            "FROM memquill.search_documents d JOIN memquill.workspaces w USING (workspace_id), "
            "unnest(d.terms) AS t(term) WHERE w.workspace LIKE %s), "
            "n AS (SELECT workspace_id, term, CASE jsonb_typeof(c) WHEN 'number' THEN c::int "
            "ELSE (c ->> 0)::int END AS body, CASE jsonb_typeof(c) WHEN 'number' THEN 0 "
            "ELSE (SELECT sum(e::int) FROM jsonb_array_elements_text(c) WITH ORDINALITY "
            "AS f(e, i) WHERE i > 1) END AS fields FROM c) "
            "SELECT count(*) FROM n JOIN memquill.search_terms t USING (workspace_id, term) "
            "WHERE n.body > t.most_body OR n.fields > t.most_fields OR n.body < t.least_body",
            under,
        ).fetchone()
    assert kept == counted
    assert len(kept) > least
    assert loose == (0,)


def test_items_alike_are_cut_to_the_first_in_the_order_of_ties(
    store: ItemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 300 items holding the query's words alike score alike: the database sends the first
    # ten in the order of ties (namespace, then key), not all of them.
    for index in range(300):
        label = LABELS[index % len(LABELS)]
        store.put(("memories", label), f"k{index:03d}", {"content": "a heron"})
    read: list[int] = []
    real = stored_item

    def counted(*args: Any) -> Any:
        read.append(1)
        return real(*args)

    monkeypatch.setattr(_database_search, "stored_item", counted)
    database, process = _side_by_side(store, ("memories",), "heron", 10, 0)
    assert database == process
    assert len(read) == 10
    assert [entry[0] for entry in database] == [("memories", "A")] * 10


def test_a_search_reads_no_namespace_whole_and_analyses_only_what_changed(
    pair: tuple[ItemStore, ItemStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    writer, reader = pair
    for index in range(50):
        writer.put(("memories", f"u{index % 5}"), f"k{index}", {"content": f"heron {index}"})

    _refuse_whole_reads(monkeypatch, reader)
    analysed: list[str] = []
    real = _database_search.analysed

    def counted(version: ChangedVersion) -> IndexedDocument | None:
        analysed.append(version.id)
        return real(version)

    monkeypatch.setattr(_database_search, "analysed", counted)
    first = [hit.item.key for hit in reader.search(("memories",), "heron 7", limit=3)]
    assert first[0] == "k7"
    assert len(analysed) == 50  # the first search brings every item's terms in
    analysed.clear()
    assert [hit.item.key for hit in reader.search(("memories",), "heron 7", limit=3)] == first
    assert analysed == []  # nothing changed: nothing analysed
    writer.put(("memories", "u2"), "k7", {"content": "a boat now"})  # corrected
    writer.put(("memories", "u3"), "new", {"content": "heron 7 and heron 7 again"})
    writer.delete(("memories", "u0"), "k0")
    hits = reader.search(("memories",), "heron 7", limit=3)
    assert hits[0].item.key == "new"
    assert "k7" not in [hit.item.key for hit in hits]
    # The correction and the version it superseded, the new item, and the version the
    # delete forgot: nothing else.
    assert len(analysed) == 4


def test_searches_catching_up_at_once_agree(tmp_path: Path, location: str) -> None:
    writer = ItemStore(_folder(tmp_path / "writer"), store=location)
    for index in range(200):
        writer.put(("memories", f"u{index % 4}"), f"k{index}", {"content": f"heron {index % 9}"})
    readers = [ItemStore(_folder(tmp_path / f"r{n}"), store=location) for n in range(4)]
    found: list[list[tuple[object, ...]]] = []
    failures: list[BaseException] = []

    def search(reader: ItemStore) -> None:
        try:
            hits = reader.search(("memories",), "heron 3", limit=20)
            found.append([(hit.item.namespace, hit.item.key, hit.score) for hit in hits])
        except BaseException as error:  # reported below, with the thread's own failure
            failures.append(error)

    try:
        threads = [threading.Thread(target=search, args=(reader,)) for reader in readers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert len(found) == 4 and all(entry == found[0] for entry in found)
        assert len(found[0]) == 20
    finally:
        writer.close()
        for reader in readers:
            reader.close()


@pytest.fixture
def pair(tmp_path: Path, location: str) -> Iterator[tuple[ItemStore, ItemStore]]:
    """Two stores on one database, as two processes would be: a writer and a reader."""
    writer = ItemStore(_folder(tmp_path / "writer"), store=location)
    reader = ItemStore(_folder(tmp_path / "reader"), store=location)
    yield writer, reader
    writer.close()
    reader.close()


@pytest.fixture
def clocked(tmp_path: Path, location: str) -> Iterator[tuple[ItemStore, list[datetime]]]:
    """A store whose clock the test moves, holding an item that expires in ten minutes."""
    clock = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC)]
    store = ItemStore(tmp_path, store=location, now=lambda: clock[0])
    store.put(("memories", "u1"), "soon", {"content": "A heron for ten minutes."}, ttl=10)
    yield store, clock
    store.close()


def test_what_expired_is_left_out_and_forgotten(
    clocked: tuple[ItemStore, list[datetime]],
) -> None:
    store, clock = clocked
    store.put(("memories", "u2"), "kept", {"content": "A heron for good."})
    assert [hit.item.key for hit in store.search(("memories",), "heron")] == ["soon", "kept"]
    clock[0] += timedelta(minutes=11)
    found = store.search(("memories",), "heron")
    assert [(hit.item.key, hit.score) for hit in found] == [
        (hit.item.key, hit.score)
        for hit in store.search(("memories",), "heron", accept=_everything)
    ]
    assert [hit.item.key for hit in found] == ["kept"]
    assert store.expired == 1
    assert store.get(("memories", "u1"), "soon") is None


def test_a_compaction_takes_its_versions_documents_with_it(
    store: ItemStore, postgres_server: Server
) -> None:
    for round_ in range(3):
        for index in range(20):
            store.put(("memories", "u1"), f"k{index}", {"content": f"heron {round_} {index}"})
    assert len(store.search(("memories",), "heron 2", limit=100)) == 20
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        # The superseded versions' rows go, as a compaction deletes them.
        deleted = connection.execute(
            "DELETE FROM memquill.versions v USING memquill.workspaces w "
            "WHERE v.workspace_id = w.workspace_id AND w.workspace LIKE %s "
            "AND v.status = 'superseded'",
            (store._base + "/%",),  # pyright: ignore[reportPrivateUsage]
        ).rowcount
        assert deleted == 40
    database, process = _side_by_side(store, ("memories",), "heron 2 1", 100, 0)
    assert database == process
    assert len(database) == 20
    _check_holders(store)


def test_records_are_not_length_normalised() -> None:
    # The database's corpus gives no mean length: right only while records ignore length.
    assert RankParams().record_b == 0


_PARTS = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=4)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PARTS, max_size=3), st.lists(_PARTS, max_size=3))
def test_a_tie_text_orders_as_its_parts_do(first: list[str], second: list[str]) -> None:
    one, two = tie_text(first), tie_text(second)
    assert "\x00" not in one  # the database's text holds no NUL
    assert (one.encode() < two.encode()) == (tuple(first) < tuple(second))
    assert (one == two) == (first == second)


def test_a_search_is_three_statements_while_nothing_changed(
    pair: tuple[ItemStore, ItemStore], postgres_server: Server
) -> None:
    writer, reader = pair
    _heron_keepers(writer, reader, 40)
    with statements(postgres_server.url) as unchanged:
        first = reader.search(("memories",), "heron")
    writer.put(("memories", "u3"), "pet", {"content": "User 3 keeps two herons now."})
    with statements(postgres_server.url) as changed:
        after = reader.search(("memories",), "heron")
    assert len(first) == len(after) == 10
    # The listing's mark (how many records the prefix holds), the figures (how many items
    # hold each term), then the candidates with their text: no namespace read.
    assert unchanged[0] == 3
    # The listing, the figures that find u3 behind, u3's catch-up (its state row, the
    # versions changed since, and one transaction: begin, lock, the documents and terms'
    # holders written, the state moved, commit), and the figures and candidates again.
    assert changed[0] == 1 + 1 + 2 + 9 + 2, changed


def test_a_get_reads_the_item_by_its_key_alone(
    pair: tuple[ItemStore, ItemStore],
    tmp_path: Path,
    location: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer, reader = pair
    for index in range(30):
        writer.put(("memories", "u1"), f"k{index}", {"content": f"heron {index}", "n": index})
    writer.put(("memories", "u1"), "k3", {"content": "corrected"}, index=False)
    writer.put(("memories", "u1"), "a/b c", {"content": "a key with a slash"}, ttl=60)
    writer.delete(("memories", "u1"), "k4")
    listed = {item.key: item for item in reader.items(("memories", "u1"), limit=100)}
    fresh = ItemStore(_folder(tmp_path / "fresh"), store=location)
    _refuse_whole_reads(monkeypatch, fresh)
    try:
        for key in (*(f"k{index}" for index in range(30)), "a/b c"):
            assert fresh.get(("memories", "u1"), key) == listed.get(key), key
        assert fresh.get(("memories", "u1"), "k4") is None
        assert fresh.get(("memories", "u2"), "k1") is None  # no such namespace
        assert fresh.get(("memories", "u1"), "missing") is None
    finally:
        fresh.close()


def test_a_get_of_an_item_whose_time_ran_out_forgets_it(
    clocked: tuple[ItemStore, list[datetime]],
) -> None:
    store, clock = clocked
    assert store.get(("memories", "u1"), "soon") is not None
    clock[0] += timedelta(minutes=11)
    assert store.get(("memories", "u1"), "soon") is None
    assert store.expired == 1
    assert store.items(("memories", "u1")) == []


def test_a_database_that_holds_nothing_yet_answers_nothing(
    tmp_path: Path, postgres_server: Server
) -> None:
    name = f"memquill_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_server.url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = postgres_server.url.rsplit("/", 1)[0] + "/" + name
        store = ItemStore(tmp_path, store=f"{url}#workspace=nothing")
        try:
            assert store.get(("memories", "u1"), "k") is None
            assert store.search(("memories",), "heron") == []
        finally:
            store.close()
        with psycopg.connect(url) as connection:
            made = connection.execute("SELECT to_regclass('memquill.workspaces')").fetchone()
        assert made == (None,)  # a read makes no schema
    finally:
        from memquill.store._postgres_pool import close_pools

        close_pools()
        with psycopg.connect(postgres_server.url, autocommit=True) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )


def test_a_prefix_holding_few_records_is_searched_in_the_process(
    store: ItemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    real = _database_search.database_search

    def counted(*args: Any) -> Any:
        asked.append(args[3])
        return real(*args)

    monkeypatch.setattr(items_store, "database_search", counted)
    monkeypatch.setattr(items_store, "DATABASE_SEARCH", 12)
    for index in range(6):
        store.put(("memories", "small"), f"k{index}", {"content": f"heron {index}"})
        store.put(("memories", "big", "one"), f"k{index}", {"content": f"heron {index}"})
        store.put(("memories", "big", "two"), f"k{index}", {"content": f"heron {index}"})
    assert len(store.search(("memories", "small"), "heron")) == 6  # 6 records: the process
    assert len(store.search(("memories", "big"), "heron", limit=20)) == 12  # 12: the process
    store.put(("memories", "big", "two"), "k0", {"content": "heron again"})  # 13 now
    found = store.search(("memories", "big"), "heron", limit=20)
    assert asked == ["heron"]
    assert [(hit.item.namespace, hit.item.key, hit.score) for hit in found] == [
        (hit.item.namespace, hit.item.key, hit.score)
        for hit in store.search(("memories", "big"), "heron", accept=_everything, limit=20)
    ]


def test_a_search_is_planned_for_its_values_at_every_run(
    store: ItemStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # psycopg prepares a statement run five times, and the server may then plan it once for
    # any values: its generic plan of the candidates across 10,000 namespaces took 28 s a
    # search, where the plan for the values takes 0.1 to 0.4 s.
    asked: list[tuple[str, object]] = []
    real = psycopg.Connection.execute

    def execute(self: psycopg.Connection[Any], query: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(query, str) and "FROM spaces s JOIN memquill.search" in query:
            asked.append(("candidates" if "docs AS" in query else "figures", kwargs.get("prepare")))
        return real(self, query, *args, **kwargs)  # pyright: ignore[reportCallIssue, reportArgumentType]

    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    for index in range(3):
        store.put(("memories", LABELS[index]), "k", {"content": f"heron keeper note {index}"})
    for _ in range(8):
        assert store.search(("memories",), "heron keeper")
    kinds = [kind for kind, _ in asked]
    assert kinds.count("figures") >= 8 and kinds.count("candidates") >= 8, kinds
    assert all(prepare is False for _, prepare in asked), asked
