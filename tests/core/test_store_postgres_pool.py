"""The PostgreSQL store's connections: one pool per process and database, shared by every
workspace, bounded, replacing what the server ended, never shared with a forked child.

Connections are counted on the server (``pg_stat_activity``, ``pg_stat_database``) of this
module's own cluster (``own_server``), where no other test file connects, and ended there for
real (``pg_terminate_backend``).
"""

from __future__ import annotations

import os
import threading
import uuid
import warnings
from pathlib import Path

import psycopg
from psycopg.rows import TupleRow
from tests.conftest import Server
from tests.core.store_helpers import TWO_MESSAGES, children, manual

from memquill import RecordStore
from memquill.items import ItemStore
from memquill.store._postgres_location import parse_location
from memquill.store._postgres_pool import POOL_SIZE, pool_for

# A write paused inside its transaction (after its rows are written, before COMMIT) until told
# to go on; then, in the same process, a write to the same workspace and one to another.
PAUSED_THEN_ON = (
    TWO_MESSAGES
    + """
import sys
from memquill import RecordStore
from memquill.errors import MemoryRecordError
from memquill.store._results import Candidate
from memquill.store import _postgres

workspace, location, other = sys.argv[1:4]
real = _postgres.PostgresBackend._store

def paused(self, connection, current, change, **how):
    stored = real(self, connection, current, change, **how)
    print("paused", flush=True)
    sys.stdin.readline()
    return stored

def save(store, text):
    try:
        print("ack", store.save([Candidate(text, {"kind": "manual"}, text)]).status, flush=True)
    except MemoryRecordError as error:
        print("error", error.code, flush=True)

store = RecordStore(workspace, location=location, lock_timeout=30)
_postgres.PostgresBackend._store = paused
save(store, "in flight")
_postgres.PostgresBackend._store = real
save(store, "after the end")
save(RecordStore(workspace, location=other, lock_timeout=30), "in another workspace")
"""
)


def admin(url: str) -> psycopg.Connection[TupleRow]:
    return psycopg.connect(url, autocommit=True)


def backends(url: str) -> set[int]:
    """The server processes of memquill's connections to the test database now."""
    with admin(url) as connection:
        rows = connection.execute(
            "SELECT pid FROM pg_stat_activity "
            "WHERE application_name = 'memquill' AND datname = current_database()"
        ).fetchall()
    return {int(str(row[0])) for row in rows}


def end_backends(url: str) -> int:
    """End every memquill connection to the test database; how many were ended."""
    with admin(url) as connection:
        ended = connection.execute(
            "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'memquill' AND datname = current_database()"
        ).fetchone()
    assert ended is not None
    return int(str(ended[0]))


def items(tmp_path: Path, server: Server) -> ItemStore:
    root = tmp_path / f"root-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    return ItemStore(root, store=f"{server.url}#workspace=pool-{uuid.uuid4().hex[:12]}")


def test_two_hundred_namespaces_in_turn_share_a_few_connections(
    tmp_path: Path, own_server: Server
) -> None:
    store = items(tmp_path, own_server)
    spaces = [("users", f"u{n}") for n in range(200)]
    for n, space in enumerate(spaces):
        store.put(space, "prefs", {"content": f"user {n} likes tea"})
    after_writes = backends(own_server.url)
    assert 1 <= len(after_writes) <= POOL_SIZE
    for n, space in enumerate(spaces):
        found = store.get(space, "prefs")
        assert found is not None and found.value == {"content": f"user {n} likes tea"}
    for n, space in enumerate(spaces):
        store.put(space, "prefs", {"content": f"user {n} likes mate"})
    # Touched in turn again and again, no namespace opened a connection of its own.
    assert backends(own_server.url) == after_writes
    store.close()


def test_listing_namespaces_opens_no_connection(tmp_path: Path, own_server: Server) -> None:
    store = items(tmp_path, own_server)
    store.put(("users", "ana"), "prefs", {"content": "Ana likes tea"})
    with admin(own_server.url) as connection:

        def sessions() -> int:
            found = connection.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = current_database()"
            ).fetchone()
            assert found is not None
            return int(str(found[0]))

        before = sessions()
        for _ in range(30):
            assert store.namespaces(("users",)) == [("users", "ana")]
        opened = sessions() - before
    assert opened < 5, f"{opened} sessions opened by 30 listings"
    store.close()


def test_two_threads_writing_different_namespaces_at_once_both_succeed(
    tmp_path: Path, own_server: Server
) -> None:
    store = items(tmp_path, own_server)
    start = threading.Barrier(2)
    failures: list[BaseException] = []

    def write(who: str) -> None:
        try:
            start.wait(timeout=30)
            for n in range(40):
                store.put(("users", f"{who}{n % 5}"), f"k{n}", {"content": f"{who} fact {n}"})
        except BaseException as error:  # reported by the test, not lost in the thread
            failures.append(error)

    threads = [threading.Thread(target=write, args=(who,)) for who in ("ana", "bo")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    for who in ("ana", "bo"):
        for n in range(40):
            found = store.get(("users", f"{who}{n % 5}"), f"k{n}")
            assert found is not None and found.value == {"content": f"{who} fact {n}"}
    assert len(backends(own_server.url)) <= POOL_SIZE
    store.close()


def test_ended_connections_are_replaced_at_the_next_call(
    tmp_path: Path, own_server: Server
) -> None:
    store = items(tmp_path, own_server)
    store.put(("users", "ana"), "prefs", {"content": "Ana likes tea"})
    # Two connections idle in the pool (two threads at once), then both ended by the server.
    both = threading.Barrier(2)

    def hold() -> None:
        location = parse_location(f"{own_server.url}#workspace=x")
        with pool_for(location).connection():
            both.wait(timeout=30)

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert end_backends(own_server.url) >= 2
    found = store.get(("users", "ana"), "prefs")
    assert found is not None and found.value == {"content": "Ana likes tea"}
    assert store.namespaces(("users",)) == [("users", "ana")]
    assert end_backends(own_server.url) >= 1
    store.put(("users", "ana"), "prefs", {"content": "Ana likes coffee"})
    assert end_backends(own_server.url) >= 1
    assert store.namespaces(("users",)) == [("users", "ana")]
    found = store.get(("users", "ana"), "prefs")
    assert found is not None and found.value == {"content": "Ana likes coffee"}
    store.close()


def test_a_write_whose_connection_is_ended_fails_whole_and_the_next_ones_go_on(
    tmp_path: Path, own_server: Server
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    location = f"{own_server.url}#workspace=ended-{uuid.uuid4()}&idle_timeout=30"
    other = f"{own_server.url}#workspace=other-{uuid.uuid4()}&idle_timeout=30"
    RecordStore(workspace, location=location).save([manual("acknowledged before")])
    with children((PAUSED_THEN_ON, (str(workspace), location, other))) as (child,):
        child.expect("paused")
        with admin(own_server.url) as connection:
            ended = connection.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'memquill' AND state LIKE 'idle in transaction%%'"
            ).fetchone()
        assert ended is not None and ended[0] == 1
        child.send("go")
        assert child.expect("error") == "storage"
        # The same process, its ended connection never reused: the next writes just work.
        assert child.expect("ack") == "saved"
        assert child.expect("ack") == "saved"
    texts = [r.content for r in RecordStore(workspace, location=location).snapshot().records]
    assert texts == ["acknowledged before", "after the end"]
    texts = [r.content for r in RecordStore(workspace, location=other).snapshot().records]
    assert texts == ["in another workspace"]


def test_a_forked_child_opens_its_own_connection(own_server: Server) -> None:
    pool = pool_for(parse_location(own_server.url))
    with pool.connection() as connection:
        parent = connection.info.backend_pid
    reading, writing = os.pipe()
    with warnings.catch_warnings():
        # 3.12+ warns of fork() in a process with threads (pytest-xdist's): this child runs
        # no code of those threads.
        warnings.simplefilter("ignore", DeprecationWarning)
        child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            with pool_for(parse_location(own_server.url)).connection() as connection:
                found = connection.execute("SELECT pg_backend_pid()").fetchone()
                os.write(writing, str(found[0] if found else 0).encode())
                code = 0
        finally:
            os._exit(code)
    os.close(writing)
    with os.fdopen(reading) as pipe:
        reported = pipe.read()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert reported and int(reported) != parent
    # The parent's connection is still its own, and works.
    with pool.connection() as connection:
        assert connection.info.backend_pid == parent
        assert connection.execute("SELECT 1").fetchone() == (1,)
