"""Writers of one PostgreSQL workspace: appending writers of different facts run together.

A writer whose operation only appends (a save, a keyed put, a correction checked by the fact's
own revision) holds its workspace's writers' lock shared and commits only if no version
written since the rows it read touched what its operation read; anything else (a forget, a
compaction, a check against the store revision) is a writer alone. An append is first run on
the rows held and sent in one message; refused, on the rows read as its transaction begins,
in two. Writers are real processes, paused inside their transaction between those two
messages, on the test cluster.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from tests.core.conftest import Backing, Server, database_backing
from tests.core.store_helpers import TWO_MESSAGES, children, manual

from memquill import RecordStore
from memquill.errors import BusyError
from memquill.store._codec import decode_store
from memquill.store._postgres import MIRROR_NAME
from memquill.store._postgres_rows import assemble, rows_of
from memquill.store._postgres_sql import WRITERS_ALONE, Script
from memquill.store._record import FactKey
from memquill.store._results import Candidate

# Runs one write, paused inside its transaction after its first message (the lock and the
# rows it read) until told to go on; prints "ack STATUS REVISION" or "error CODE". An append
# on the rows held is one message, with no moment inside its transaction to pause in: the
# write takes the path of two, as after a refusal.
PAUSED = (
    TWO_MESSAGES
    + """
import sys
from memquill import RecordStore
from memquill.store._record import FactKey
from memquill.errors import MemoryRecordError
from memquill.store._results import Candidate
from memquill.store import _postgres

workspace, location, action, *args = sys.argv[1:]
real = _postgres.PostgresBackend._store

def paused(self, connection, current, change, **how):
    stored = real(self, connection, current, change, **how)
    print("paused", flush=True)
    sys.stdin.readline()
    _postgres.PostgresBackend._store = real  # a retry is not paused again
    return stored

store = RecordStore(workspace, location=location, lock_timeout=30)
store.snapshot()
_postgres.PostgresBackend._store = paused
try:
    if action == "save":
        text, idempotency, key = args
        candidate = Candidate(text, {"kind": "manual"}, idempotency, key if key != "-" else None)
        result = store.save([candidate])
    elif action == "save-from":
        text, session, message = args
        source = {"kind": "conversation", "sessionId": session, "messageId": message}
        result = store.save([Candidate(text, source, text)])
    else:
        key, text, revision = args
        result = store.correct(FactKey(key), text, revision)
    print("ack", result.status, result.revision, flush=True)
except MemoryRecordError as error:
    print("error", error.code, flush=True)
"""
)


@pytest.fixture
def db(tmp_path: Path, postgres_server: Server) -> Backing:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return database_backing(workspace, postgres_server)


def keyed(content: str, key: str) -> Candidate:
    return Candidate(content, {"kind": "manual"}, f"idem:{content}", key)


def texts(backing: Backing) -> list[str]:
    return [record.content for record in decode_store(backing.raw().decode()).records]


def prefix_revisions(backing: Backing) -> dict[str, int]:
    """The revision of every prefix of the stored versions (each state an append-only history
    passed through), by how many versions it holds."""
    parsed = rows_of(backing.raw())
    assert parsed is not None
    header, rows = parsed
    return {
        backing.revision_of(assemble(header, [row for row, _ in rows[:n]])): n
        for n in range(len(rows) + 1)
    }


def test_a_writer_of_another_fact_commits_while_one_is_paused_inside_its_transaction(
    db: Backing,
) -> None:
    store = db.store()
    store.save([manual("seed")])
    mirrored = f"{db.location_for_child()}&mirror=1"  # its copy of the records, kept too
    args = (str(db.workspace), mirrored, "save", "paused fact", "paused", "-")
    with children((PAUSED, args)) as (child,):
        child.expect("paused")
        # It would have been busy when every writer took the workspace row for its whole write.
        beside = db.store(lock_timeout=0.2).save([manual("beside it")])
        assert beside.status == "saved"
        child.send("go")
        status, revision = child.expect("ack").split()
    assert status == "saved"
    # The paused write was numbered after the one that committed while it waited, and its
    # answer is the store as its commit left it.
    assert texts(db) == ["seed", "beside it", "paused fact"]
    assert revision == db.revision_of(db.raw()) == db.store().snapshot().revision
    assert store.snapshot().revision == revision  # a host that held the rows catches up
    assert store.export() == db.raw()
    assert (db.workspace / "memory" / MIRROR_NAME).read_bytes() == db.raw()


def test_two_writers_of_one_fact_give_one_success_and_one_conflict(db: Backing) -> None:
    store = db.store()
    saved = store.save([keyed("Water.", "drinks/ana")])
    # Corrections are appended from the file's second format on; the first one rewrites it.
    store.correct(FactKey("drinks/ana"), "Tea.", saved.revision)
    record = store.snapshot().by_key("drinks/ana")
    assert record is not None
    revision = store.snapshot().record_revision(record)
    args = (str(db.workspace), db.location_for_child(), "correct", "drinks/ana", "Milk.", revision)
    with children((PAUSED, args)) as (child,):
        child.expect("paused")
        first = db.store(lock_timeout=0.2).correct(FactKey("drinks/ana"), "Coffee.", revision)
        assert first.status == "saved"
        child.send("go")
        assert child.expect("error") == "conflict"
    assert store.snapshot().by_key("drinks/ana") is not None
    assert [r.content for r in store.snapshot().records] == ["Water.", "Tea.", "Coffee."]


def test_one_operation_from_two_writers_is_written_once(db: Backing) -> None:
    store = db.store()
    store.save([manual("seed")])
    args = (str(db.workspace), db.location_for_child(), "save", "once", "same-key", "-")
    with children((PAUSED, args)) as (child,):
        child.expect("paused")
        candidate = Candidate("once", {"kind": "manual"}, "same-key")
        assert db.store(lock_timeout=0.2).save([candidate]).status == "saved"
        child.send("go")
        assert child.expect("ack").split()[0] == "duplicate"
    assert texts(db) == ["seed", "once"]


def test_a_key_taken_by_another_writer_meanwhile_is_a_conflict(db: Backing) -> None:
    store = db.store()
    store.save([manual("seed")])
    args = (str(db.workspace), db.location_for_child(), "save", "ours", "ours", "k1")
    with children((PAUSED, args)) as (child,):
        child.expect("paused")
        assert db.store(lock_timeout=0.2).save([keyed("theirs", "k1")]).status == "saved"
        child.send("go")
        assert child.expect("error") == "conflict"  # as if it had come second
    assert texts(db) == ["seed", "theirs"]


def test_a_source_message_tombstoned_meanwhile_blocks_a_save_from_it(db: Backing) -> None:
    store = db.store()
    first = store.save([keyed("x", "other")])
    store.correct(FactKey("other"), "x2", first.revision)  # the file's second format
    said = {"kind": "conversation", "sessionId": "s1", "messageId": "m1"}
    saved = store.save([Candidate("Ana drinks tea.", said, "from-m1", "drinks/ana")])
    current = store.snapshot().find(saved.record_id or "")
    assert current is not None
    revision = store.snapshot().record_revision(current)
    args = (str(db.workspace), db.location_for_child(), "save-from", "Ana likes tea.", "s1", "m1")
    with children((PAUSED, args)) as (child,):
        child.expect("paused")
        # Correcting the fact supersedes its version from m1: nothing more is saved from m1.
        corrected = db.store(lock_timeout=0.2).correct(
            FactKey("drinks/ana"), "Ana drinks water.", revision
        )
        assert corrected.status == "saved"
        child.send("go")
        assert child.expect("ack").split()[0] == "blocked"  # as if it had come second
    assert "Ana likes tea." not in texts(db)


def test_many_writers_lose_nothing_and_each_answer_is_a_state_the_store_passed_through(
    tmp_path: Path, postgres_server: Server
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    db = database_backing(workspace, postgres_server)
    seeded = db.store().save([keyed("seed", "seed")])
    # The file's second format, whose corrections are appended (the first rewrites it).
    db.store().correct(FactKey("seed"), "seed", seeded.revision, extra={"again": True})
    answers: list[tuple[str, str, str]] = []  # (revision, the id it wrote, its text)
    failures: list[BaseException] = []
    lock = threading.Lock()

    def writer(number: int) -> Callable[[], None]:
        def run() -> None:
            store = RecordStore(workspace, location=db.location, lock_timeout=30)
            try:
                for step in range(12):
                    key = f"w{number}/k{step % 4}"
                    text = f"writer {number} step {step}"
                    if step < 4:
                        result = store.save([keyed(text, key)])
                    else:  # corrections of its own facts, by their own revisions
                        snapshot = store.snapshot()
                        current = snapshot.by_key(key)
                        assert current is not None
                        result = store.correct(
                            FactKey(key), text, snapshot.record_revision(current)
                        )
                    assert result.status == "saved"
                    with lock:
                        answers.append((result.revision, result.record_id or "", text))
            except BaseException as error:  # reported by the test thread
                failures.append(error)

        return run

    threads = [threading.Thread(target=writer(n)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not failures, failures
    assert len(answers) == 48
    records = decode_store(db.raw().decode()).records
    assert len(records) == 50
    prefixes = prefix_revisions(db)
    places = {record.id: place for place, record in enumerate(records)}
    for revision, record_id, text in answers:
        # The answer's revision is the store just after that write: the prefix that ends
        # with its version (appends only, so every state is a prefix of the last one).
        assert prefixes.get(revision) == places[record_id] + 1, text
        assert records[places[record_id]].content == text
    assert {r.content for r in records if r.status == "active"} == {"seed"} | {
        f"writer {n} step {s}" for n in range(4) for s in range(8, 12)
    }


def test_an_append_waits_for_a_writer_alone(db: Backing) -> None:
    # The append's function takes the workspace's writers' lock shared, under the key a
    # writer alone takes exclusively: held alone elsewhere, an append waits for it (here,
    # until its lock timeout) and writes nothing.
    assert db.url is not None and db.name is not None
    store = db.store(lock_timeout=0.3)
    store.save([manual("seed")])  # the rows held: the next save is an append
    with psycopg.connect(db.url, autocommit=True) as other, other.transaction():
        other.execute(WRITERS_ALONE, (db.name,))
        with pytest.raises(BusyError):
            store.save([manual("appended while a writer is alone")])
    assert texts(db) == ["seed"]


@pytest.mark.parametrize("committed", [True, False])
def test_an_append_whose_one_message_loses_its_connection_lands_once(
    db: Backing, monkeypatch: pytest.MonkeyPatch, committed: bool
) -> None:
    # An append on the rows held is one message; a connection lost with it leaves the client
    # unsure whether it committed. It is read again and decided on the rows read: committed,
    # its own operation is found there (the key's fact already says so); not, it is written.
    store = db.store()
    store.save([manual("seed")])
    real = Script.send
    lost: list[str] = []

    def send(self: Script) -> object:
        appending = not lost and any("memquill.append_v4" in part for part in self._parts)  # pyright: ignore[reportPrivateUsage]
        if appending and not committed:
            lost.append("before")
            raise psycopg.OperationalError("the connection was lost")
        cursor = real(self)
        if appending:
            lost.append("after")
            raise psycopg.OperationalError("the connection was lost")
        return cursor

    monkeypatch.setattr(Script, "send", send)
    result = store.upsert([keyed("once", "k1")])
    assert lost == ["after" if committed else "before"]
    assert result.status == ("duplicate" if committed else "saved")
    assert texts(db) == ["seed", "once"]
    assert result.revision == db.store().snapshot().revision
