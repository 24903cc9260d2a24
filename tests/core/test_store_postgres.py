"""The PostgreSQL store: crash points, byte parity with the file, secrecy of the URL, import.

Every crash test checks the two promises: no acknowledged write is lost, and the stored bytes
always decode (no torn store). Processes are real; the server is the test cluster
(``conftest.py``), restarted for real where the test says so.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import TupleRow
from tests import postgres_cluster
from tests.core.conftest import Backing, Server, database_backing
from tests.core.store_helpers import TWO_MESSAGES, children, expect_error, manual

from memquill import RecordStore, open_session
from memquill.errors import MemoryRecordError, Messages
from memquill.store import _store as store_module
from memquill.store._codec import decode_store
from memquill.store._postgres import MIRROR_NAME
from memquill.store._postgres_location import parse_location
from memquill.store._postgres_rows import Row
from memquill.store._postgres_sql import SCHEMA_VERSION
from memquill.store._record import Record
from memquill.store._record_key import operation_hashes
from memquill.store._results import _Index  # pyright: ignore[reportPrivateUsage]

# Pauses a database writer inside its transaction: after the row lock, before or after the
# UPDATE, until told to go on. Prints "ack" only for a write the store acknowledged. (An
# append on the rows held is one message, nothing to pause inside: it takes the path of two.)
PAUSED_WRITER = (
    TWO_MESSAGES
    + """
import sys
from memquill import RecordStore
from memquill.errors import MemoryRecordError
from memquill.store._results import Candidate
from memquill.store import _postgres

workspace, location, stage, text = sys.argv[1:5]
real = _postgres.PostgresBackend._store

def paused(self, connection, current, change, **how):
    digest = real(self, connection, current, change, **how) if stage == "after-update" else None
    print("paused", flush=True)
    sys.stdin.readline()
    return digest if digest is not None else real(self, connection, current, change, **how)

_postgres.PostgresBackend._store = paused
store = RecordStore(workspace, location=location, lock_timeout=30)
try:
    result = store.save([Candidate(text, {"kind": "manual"}, text)])
    print("ack", result.record_id, flush=True)
except MemoryRecordError as error:
    print("error", error.code, flush=True)
"""
)

# Saves facts in a loop, printing each acknowledgement; killed at a random moment.
LOOPING_WRITER = """
import sys
from memquill import RecordStore
from memquill.store._results import Candidate

workspace, location, tag = sys.argv[1:4]
store = RecordStore(workspace, location=location, lock_timeout=30)
print("ready", flush=True)
for i in range(10_000):
    result = store.save([Candidate(f"{tag} {i}", {"kind": "manual"}, f"{tag}-{i}")])
    print("ack", result.record_id, flush=True)
"""

# Dies right after COMMIT returned, before the store acknowledges anything.
DIES_AFTER_COMMIT = """
import os, signal, sys
from memquill import RecordStore
from memquill.store._results import Candidate
from memquill.store import _postgres

def die(self, change, digest):
    os.kill(os.getpid(), signal.SIGKILL)

_postgres.PostgresBackend._published = die
store = RecordStore(sys.argv[1], location=sys.argv[2])
store.save([Candidate("committed, never acknowledged", {"kind": "manual"}, "late")])
"""


@pytest.fixture
def db(tmp_path: Path, postgres_server: Server) -> Backing:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return database_backing(workspace, postgres_server)


@pytest.fixture
def own_db(tmp_path: Path, own_server: Server) -> Backing:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return database_backing(workspace, own_server)


def contents(backing: Backing) -> list[str]:
    """The stored facts' text; decoding also proves the store is not torn."""
    return [record.content for record in decode_store(backing.raw().decode()).records]


def admin(server_url: str) -> psycopg.Connection[TupleRow]:
    return psycopg.connect(server_url, autocommit=True)


@pytest.mark.parametrize("stage", ["before-update", "after-update"])
def test_a_writer_killed_inside_its_transaction_changes_nothing(db: Backing, stage: str) -> None:
    store = db.store(lock_timeout=30)
    store.save([manual("acknowledged before")])
    before = store.snapshot().records[0]
    args = (str(db.workspace), db.location_for_child(), stage, "never committed")
    with children((PAUSED_WRITER, args)) as (child,):
        child.expect("paused")
        # It holds its turn among appending writers: a writer of another fact goes on; one
        # that forgets must be alone, so it will not wait and is busy, and changes nothing.
        assert db.store(lock_timeout=0.2).save([manual("beside it")]).status == "saved"
        revision = store.snapshot().record_revision(before)
        expect_error(
            "busy", Messages.LOCK_HELD, db.store(lock_timeout=0.2).revoke, before.id, revision
        )
        child.kill()
    assert store.save([manual("acknowledged after")]).status == "saved"
    assert contents(db) == ["acknowledged before", "beside it", "acknowledged after"]


def test_a_writer_killed_after_commit_but_before_its_answer_left_a_whole_write(
    db: Backing,
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", DIES_AFTER_COMMIT, str(db.workspace), db.location_for_child()],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL
    assert contents(db) == ["committed, never acknowledged"]
    retry = db.store().save([manual("committed, never acknowledged", "late")])
    assert retry.status == "duplicate"


def test_writers_killed_at_random_moments_lose_no_acknowledged_write(db: Backing) -> None:
    acknowledged: set[str] = set()
    for round_number in range(3):
        args = (str(db.workspace), db.location_for_child(), f"round {round_number}")
        with children((LOOPING_WRITER, args)) as (child,):
            child.expect("ready")
            for _ in range(5 + 3 * round_number):
                acknowledged.add(child.expect("ack"))
            child.kill()  # wherever it is: mid-transaction, in COMMIT, between saves
        ids = {record.id for record in decode_store(db.raw().decode()).records}
        assert acknowledged <= ids
    assert db.store().save([manual("the store still takes writes")]).status == "saved"


def test_a_frozen_holder_is_cut_off_by_the_server_and_never_acknowledged(
    db: Backing, postgres_server: Server
) -> None:
    # Three seconds: a loaded machine can stall a live writer between its statements for one.
    location = f"{db.location}&idle_timeout=3"
    first = db.store().save([manual("forgotten by the other writer")])
    args = (str(db.workspace), location, "after-update", "frozen writer")
    with children((PAUSED_WRITER, args)) as (child,):
        child.expect("paused")
        os.kill(child.pid, signal.SIGSTOP)
        started = time.monotonic()
        # A forget is a writer alone: it waits for the frozen one, which the server ends.
        assert first.record_id is not None
        forgot = db.store(lock_timeout=30).revoke(first.record_id, first.revision)
        assert forgot.status == "saved"
        assert time.monotonic() - started < 25  # the server ended the frozen transaction
        os.kill(child.pid, signal.SIGCONT)
        child.send("go")
        assert child.expect("error") == "storage"
    assert contents(db) == [""]  # the forgotten fact's tombstone; the frozen write never was


def test_a_reader_stalled_while_making_its_rows_is_not_cut_off(
    db: Backing, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first read of 100,000 rows, on a busy machine, took them in and made them into the
    # workspace inside its transaction for longer than idle_timeout: the server ended it, and
    # its retry, and the read failed ("storage"). A read is one statement now, no transaction.
    # A stall while making the rows (a loaded machine's) is stood in for by a sleep longer
    # than the idle timeout.
    db.store().save([manual(f"fact {n}") for n in range(20)])
    made = Row.of

    def stalled(record_id: str, meta: str, content: str) -> Row:
        if content == "fact 0":  # once per read of every row
            time.sleep(1.5)
        return made(record_id, meta, content)

    monkeypatch.setattr(Row, "of", stalled)
    reader = RecordStore(db.workspace, location=f"{db.location}&idle_timeout=0.5")
    try:
        records = reader.snapshot().records
    finally:
        reader.close()
    assert [record.content for record in records] == [f"fact {n}" for n in range(20)]


def test_a_writer_indexes_the_workspace_before_its_transaction_not_inside_it(
    db: Backing, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Sixteen writers of a namespace of 100,000 items each indexed it at their first put,
    # inside their transactions, all at once on two cores: the server ended every one of them
    # as idle (the first put of each failed, "storage"). A stall while indexing every record
    # (a loaded machine's) is stood in for by a sleep longer than the idle timeout.
    db.store().save([manual(f"fact {n}") for n in range(20)])
    writer = RecordStore(db.workspace, location=f"{db.location}&idle_timeout=0.5")
    try:
        assert len(writer.snapshot().records) == 20  # held and decoded, not yet indexed
        indexing = _Index.extend

        def stalled(index: _Index, records: Sequence[Record]) -> None:
            if len(records) - index.count >= 20:  # the whole workspace, not what changed
                time.sleep(1.5)
            indexing(index, records)

        monkeypatch.setattr(_Index, "extend", stalled)
        assert writer.save([manual("after the others")]).status == "saved"
    finally:
        writer.close()
    assert contents(db)[-1] == "after the others"


def test_a_terminated_backend_aborts_its_write(own_db: Backing, own_server: Server) -> None:
    db, postgres_server = own_db, own_server
    args = (str(db.workspace), db.location_for_child(), "after-update", "terminated writer")
    with children((PAUSED_WRITER, args)) as (child,):
        child.expect("paused")
        with admin(postgres_server.url) as connection:
            ended = connection.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = 'memquill' AND state LIKE 'idle in transaction%%'"
            ).fetchone()
        assert ended is not None and ended[0] >= 1
        child.send("go")
        assert child.expect("error") == "storage"
    assert db.store().save([manual("after termination")]).status == "saved"
    assert contents(db) == ["after termination"]


def test_an_immediate_server_restart_loses_no_acknowledged_write(
    own_db: Backing, own_server: Server
) -> None:
    db, postgres_server = own_db, own_server
    assert postgres_server.data is not None and postgres_server.bindir is not None
    store = db.store(lock_timeout=30)
    before = store.save([manual("acknowledged before the crash")])
    args = (str(db.workspace), db.location_for_child(), "after-update", "in flight")
    with children((PAUSED_WRITER, args)) as (child,):
        child.expect("paused")
        postgres_cluster.restart_immediately(postgres_server.data, postgres_server.bindir)
        child.send("go")
        assert child.expect("error") == "storage"
    # The same store reconnects; its stale connection is replaced before anything is sent.
    after = store.save([manual("acknowledged after the crash")], before.revision)
    assert after.status == "saved"
    assert contents(db) == ["acknowledged before the crash", "acknowledged after the crash"]


class FixedIds:
    """uuid4 replaced by a counter, so two backends given the same calls write the same ids."""

    def __init__(self) -> None:
        self.count = 0

    def uuid4(self) -> uuid.UUID:
        self.count += 1
        return uuid.UUID(int=self.count, version=4)


def fixed_clock() -> Callable[[], datetime]:
    moments = (datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=n) for n in range(1000))
    return lambda: next(moments)


def run_sequence(store: RecordStore) -> bytes:
    """Save, correct, forget, save, compact; the export with the correction's key hash (which
    holds the revision it was made against, so it differs by backend) as a placeholder."""
    first = store.save([manual("alpha"), manual("beta")])
    fact = first.record_ids[0] or ""
    corrected = store.correct(fact, "alpha, corrected", first.revision)
    store.revoke(first.record_ids[1] or "", corrected.revision)
    later = store.save([manual("gamma")])
    assert store.compact(later.revision).status == "saved"
    material = f"correction:{fact}:{first.revision}:alpha, corrected"
    key = operation_hashes(store.record_key.load(), material)[0].encode()
    exported = store.export()
    assert exported.count(key) == 1
    return exported.replace(key, b"<correction key>")


def test_the_same_operations_give_the_same_bytes_on_both_backends(
    db: Backing, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file_workspace = tmp_path / "file-ws"
    file_workspace.mkdir()
    on_db = db.store(now=fixed_clock())
    # One record key for both, as when a file store's key moves along with it.
    on_file = RecordStore(file_workspace, now=fixed_clock(), record_key=on_db.record_key)
    on_db.snapshot()  # the row and its workspace id exist before the ids are counted
    # A file store's very first write first tries to answer without the lock (so a refused
    # write creates nothing), drawing ids twice; with the lock file there, it draws once.
    (file_workspace / "memory").mkdir()
    (file_workspace / "memory" / ".records-lock").touch()
    exported: list[bytes] = []
    for store in (on_file, on_db):
        monkeypatch.setattr(store_module, "uuid", FixedIds())
        exported.append(run_sequence(store))
    assert exported[0] == exported[1]
    assert on_db.export() == db.raw()
    assert on_file.export() == (file_workspace / "memory" / "records.md").read_bytes()
    # Revisions differ: each store's identity seeds them (a path, a stored workspace id).
    assert on_file.snapshot().revision != on_db.snapshot().revision
    assert on_db.snapshot().revision == db.revision_of(db.raw())


def test_the_url_is_never_shown(db: Backing) -> None:
    password = "hunter2-not-a-real-password"
    url = f"postgresql://memquill:{password}@127.0.0.1:1/nowhere#workspace=x"
    store = RecordStore(db.workspace, location=url)
    error = expect_error("storage", Messages.DATABASE_UNAVAILABLE, store.snapshot)
    assert password not in str(error) and password not in repr(error)
    assert error.__suppress_context__
    assert password not in repr(store) and password not in repr(store.backend)
    session = open_session(db.workspace, store=url)
    assert password not in repr(session)
    done = memquill(db.workspace, "--store", url, "remember", "x")
    assert done.returncode != 0 and password not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("postgresql://h/d#colour=red", Messages.STORE_OPTION_UNKNOWN.format("colour")),
        ("postgresql://h/d#workspace=", Messages.STORE_OPTION_WORKSPACE),
        ("postgresql://h/d#idle_timeout=0", Messages.STORE_OPTION_IDLE),
        ("postgresql://h/d#idle_timeout=soon", Messages.STORE_OPTION_IDLE),
        ("postgresql://h/d#mirror=2", Messages.STORE_OPTION_MIRROR),
        ("postgresql://h/d#mirror", Messages.STORE_OPTIONS),
    ],
)
def test_unknown_or_bad_location_options_are_refused_by_name(location: str, message: str) -> None:
    # Issue 23, item 4: the message names the option to fix (never the URL or a value).
    with pytest.raises(MemoryRecordError) as info:
        parse_location(location)
    assert (info.value.code, info.value.message) == ("invalid", message)


def test_a_newer_schema_is_refused(db: Backing, postgres_server: Server) -> None:
    name = f"memquill_newer_{uuid.uuid4().hex[:8]}"
    base = postgres_server.url.rsplit("/", 1)[0]
    with admin(postgres_server.url) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        url = f"{base}/{name}"
        RecordStore(db.workspace, location=url).save([manual("first use creates the schema")])
        with admin(url) as connection:
            connection.execute(
                "INSERT INTO memquill.schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,)
            )
        expect_error(
            "storage", Messages.DATABASE_SCHEMA, RecordStore(db.workspace, location=url).snapshot
        )
    finally:
        with admin(postgres_server.url) as connection:
            connection.execute(
                sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name))
            )


def test_the_mirror_is_a_read_only_copy_that_queries_ignore(db: Backing) -> None:
    location = f"{db.location}&mirror=1"
    store = RecordStore(db.workspace, location=location)
    store.save([manual("mirrored fact about lighthouses")])
    mirror = db.workspace / "memory" / MIRROR_NAME
    assert mirror.read_bytes() == store.export() == db.raw()
    assert mirror.stat().st_mode & 0o777 == 0o400  # read-only, and only its owner's
    store.save([manual("second fact")])
    assert mirror.read_bytes() == db.raw()
    found = memquill(db.workspace, "search", "lighthouses", "--json", store=location)
    assert found.returncode == 0, found.stderr
    assert "memory/records/" in found.stdout and MIRROR_NAME not in found.stdout


def memquill(
    workspace: Path, *args: str, store: str | None = None, data_home: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ}
    if store is not None:
        env["MEMQUILL_STORE"] = store
    if data_home is not None:  # another user's data folder: another machine's own record key
        env["XDG_DATA_HOME"] = str(data_home)
    return subprocess.run(
        [str(Path(sys.executable).parent / "memquill"), "--workspace", str(workspace), *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


def test_two_workers_with_the_same_store_share_memory(db: Backing, tmp_path: Path) -> None:
    host_a, host_b = tmp_path / "host-a", tmp_path / "host-b"
    host_a.mkdir()
    host_b.mkdir()
    saved = memquill(host_a, "remember", "the deploy window is Tuesday", store=db.location)
    assert saved.returncode == 0, saved.stderr
    found = memquill(host_b, "search", "deploy window", "--json", store=db.location)
    assert found.returncode == 0, found.stderr
    assert "the deploy window is Tuesday" in found.stdout
    assert not (host_a / "memory" / "records.md").exists()


def test_hosts_with_different_user_keys_agree_on_duplicates_and_tombstones(
    db: Backing, tmp_path: Path
) -> None:
    # Each host has its own user data folder, so its own file record key; a shared store's
    # hashes are keyed by the database's key, so a retry or a forgotten fact is recognised
    # whichever host writes.
    hosts = {name: (tmp_path / name, tmp_path / f"{name}-data") for name in ("a", "b")}
    for workspace, data in hosts.values():
        workspace.mkdir()
        data.mkdir()

    def run(host: str, *args: str, status: int = 0) -> dict[str, object]:
        workspace, data = hosts[host]
        done = memquill(workspace, *args, "--json", store=db.location, data_home=data)
        assert done.returncode == status, done.stderr
        parsed: dict[str, object] = json.loads(done.stdout)
        return parsed

    saved = run("a", "remember", "The team deploys on Tuesdays.", "--idempotency-key", "deploys")
    assert saved["status"] == "saved"
    assert run("b", "remember", "The team deploys on Tuesdays.", "--idempotency-key", "deploys")[
        "status"
    ] == ("duplicate")
    pin = run("a", "remember", "My bank PIN is 4821", "--idempotency-key", "pin")
    revision = str(pin["record_revision"])
    run("a", "forget", str(pin["record_id"]), "--revision", revision)
    blocked = run("b", "remember", "My bank PIN is 4821", "--idempotency-key", "pin", status=27)
    assert blocked["status"] == "blocked"
    # The text's words, not its digits alone: "4821" may occur by chance in a hex id or hash.
    assert b"PIN is 4821" not in db.raw()
    assert b"bank PIN" not in db.raw()


def test_export_and_import_round_trip_and_refuse_rewriting_history(
    db: Backing, tmp_path: Path
) -> None:
    store = db.store()
    kept = store.save([manual("the server is in Frankfurt"), manual("a secret plan")])
    store.revoke(kept.record_ids[1] or "", kept.revision)
    copy = tmp_path / "r.md"
    exported = memquill(db.workspace, "export", "--output", str(copy), store=db.location)
    assert exported.returncode == 0, exported.stderr
    assert copy.read_bytes() == db.raw()
    revision = store.snapshot().revision
    same = memquill(db.workspace, "import", "--revision", revision, str(copy), store=db.location)
    assert same.returncode == 0 and same.stdout.startswith("duplicate"), same.stderr
    copy.write_bytes(copy.read_bytes().replace(b"Frankfurt", b"Hamburg!!"))
    fixed = memquill(
        db.workspace, "import", "--revision", revision[:12], str(copy), store=db.location
    )
    assert fixed.returncode == 0, fixed.stderr
    assert "the server is in Hamburg!!" in contents(db)
    stale = memquill(db.workspace, "import", "--revision", revision, str(copy), store=db.location)
    assert stale.returncode != 0 and "conflict" in stale.stderr
    # A copy that would bring a forgotten record back is refused, and nothing changes.
    current = store.snapshot().revision
    before = db.raw()
    unforget = before.replace(b'"status":"revoked"', b'"status":"superseded"')
    assert unforget != before
    copy.write_bytes(unforget)
    refused = memquill(db.workspace, "import", "--revision", current, str(copy), store=db.location)
    assert refused.returncode != 0 and "invalid" in refused.stderr
    assert db.raw() == before
