"""``PostgresBackend``: the records store in one PostgreSQL row per workspace.

The row holds the exact bytes of ``records.md`` (the 2 MiB bound keeps that cheap), so the
format, revisions, tombstones and every check are the file store's. A write is one
transaction: ``SELECT … FOR NO KEY UPDATE`` on the row (other writers queue on the server, in
order; ``lock_timeout`` turns a long wait into ``busy``), the store's pure operation, and an
``UPDATE``; it is acknowledged only after ``COMMIT`` returns. A writer that freezes inside the
transaction is cut off by the server (``idle_in_transaction_session_timeout``) and its write
never happens; a writer that dies is rolled back. Nothing is ever written outside that
transaction.

The store location is ``postgresql://user:password@host:port/database`` with options after
``#``: ``workspace=NAME`` (the row; default ``default``), ``mirror=1`` (keep a read-only copy
at ``memory/.records-mirror.md`` in the local workspace after every write) and
``idle_timeout=SECONDS`` (default 5). The URL is never logged, repeated in an error, or shown
by ``repr``. The schema (``memquill.records`` and ``memquill.schema_version``) is created on
first use; the workspace's row (and its id, which seeds revisions) on first connection. What
is said to the server (the schema, the statements, opening a connection) is
:mod:`memquill.store._postgres_sql`'s.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Literal, TypeVar

import psycopg
from psycopg import errors as pg_errors

from memquill.atomic import atomic_write
from memquill.errors import BusyError, MemoryRecordError, Messages, StorageError
from memquill.owner_only import private_folder
from memquill.store._backend import RecordsBackend
from memquill.store._doctor import DoctorReport, report_for
from memquill.store._memo import Decoded
from memquill.store._postgres_location import PostgresLocation, parse_location
from memquill.store._postgres_sql import (
    APPEND,
    READ,
    READ_FOR_WRITE,
    READ_FOR_WRITE_NOWAIT,
    REPLACE,
    SCHEMA_VERSION,
    Connection,
    as_bytes,
    close_quietly,
    connect,
    list_workspaces,
)
from memquill.store._record_key import KEY_BYTES, KeySource
from memquill.store._results import Snapshot, WriteResult
from memquill.store._secrets import SecretScanner
from memquill.store._transaction import Change, Operation, apply_operation, backup_of, locate

__all__ = [
    "MIRROR_NAME",
    "SCHEMA_VERSION",
    "PostgresBackend",
    "PostgresLocation",
    "list_workspaces",
    "parse_location",
]

_T = TypeVar("_T")
MIRROR_NAME: Final = ".records-mirror.md"


class PostgresBackend(RecordsBackend):
    """One workspace's records in PostgreSQL (see the module docstring).

    Args:
        location: the parsed store location.
        workspace: the local workspace folder (for the optional mirror file only).
    """

    kind = "postgres"

    def __init__(self, location: PostgresLocation, workspace: str | None = None) -> None:
        super().__init__()
        self._location = location
        self._workspace = workspace
        self._connection: Connection | None = None
        self._identity: bytes | None = None
        self._key: bytes | None = None
        # The last bytes read or written and their sha256 as the server computed it: the
        # server sends the row's bytes only when their hash differs.
        self._raw = b""
        self._digest = b""
        self._busy = threading.Lock()  # one statement stream per connection

    def __repr__(self) -> str:
        return f"PostgresBackend(workspace={self._location.workspace!r})"

    @property
    def location(self) -> PostgresLocation:
        """The parsed store location."""
        return self._location

    # -- the seam ------------------------------------------------------------------------

    def identity(self) -> bytes:
        if self._identity is None:
            self.read()
        assert self._identity is not None
        return self._identity

    def read(self) -> bytes:
        with self._busy:
            return self._with_connection(lambda connection: self._fetch(connection, None))

    def snapshot(self) -> Snapshot:
        raw = self.read()
        return self.memo.decode(self.identity(), raw).snapshot

    def transact(self, operation: Operation, timeout: float) -> WriteResult:
        with self._busy:
            for attempt in (1, 2):
                connection = self._connect()
                started = False
                try:
                    with connection.transaction():
                        if timeout > 0:
                            milliseconds = f"{max(1, round(timeout * 1000))}ms"
                            connection.execute(
                                "SELECT set_config('lock_timeout', %s, true)", (milliseconds,)
                            )
                        raw = self._fetch(connection, "nowait" if timeout <= 0 else "wait")
                        started = True
                        current = self.memo.decode(self.identity_now(), raw)
                        change = apply_operation(current, operation)
                        if isinstance(change, WriteResult):
                            return change
                        backup = self._backup(raw, change)
                        digest = self._store(connection, current, change)
                except pg_errors.LockNotAvailable:
                    raise BusyError(Messages.LOCK_HELD) from None
                except psycopg.OperationalError:
                    self._drop()
                    if started or attempt == 2:
                        raise StorageError(Messages.DATABASE_SAVE_FAILED) from None
                    continue  # a connection gone stale before the transaction did anything
                except psycopg.Error:
                    self._drop()
                    raise StorageError(Messages.DATABASE_SAVE_FAILED) from None
                return replace(self._published(change, digest), backup=backup)
        raise StorageError(Messages.DATABASE_SAVE_FAILED)  # not reached: attempt 2 raises

    def check_writable(self) -> None:
        # Writers queue on the server in order; looking at the row lock would mean taking it.
        self.read()

    def doctor(
        self,
        *,
        secrets: SecretScanner,
        fix: bool,
        lock_timeout: float,
        now: Callable[[], datetime],
        record_key: KeySource,
        expected_revision: str | None = None,
    ) -> DoctorReport:
        # Rows are written only by memquill, so there is no hand edit to repair.
        raw = self.read()
        try:
            snapshot = self.memo.decode(self.identity(), raw).snapshot
        except MemoryRecordError as failure:
            return report_for(None, failure, secrets=secrets, used_bytes=len(raw))
        return report_for(
            snapshot, None, secrets=secrets, used_bytes=len(raw), record_key=record_key
        )

    def record_key(self) -> KeySource:
        # In the row, so every host sharing the store keys hashes alike; never exported.
        return _RowKey(self)

    def keyas_bytes(self) -> bytes:
        """The workspace row's record key (read once; it never changes)."""
        if self._key is None:
            with self._busy:
                self._key = self._with_connection(self._fetch_key)
        return self._key

    def identity_now(self) -> bytes:
        """The identity the last statement saw (set by every read of the row)."""
        assert self._identity is not None
        return self._identity

    # -- internals -----------------------------------------------------------------------

    def _fetch(self, connection: Connection, lock: Literal["wait", "nowait"] | None) -> bytes:
        """The row's bytes (``lock``: taken ``FOR NO KEY UPDATE``, waiting or not)."""
        query = (
            READ if lock is None else READ_FOR_WRITE if lock == "wait" else READ_FOR_WRITE_NOWAIT
        )
        arguments = {"known": self._digest, "name": self._location.workspace}
        found = connection.execute(query, arguments).fetchone()
        if found is None:
            self._create_row(connection)
            found = connection.execute(query, arguments).fetchone()
        if found is None:
            raise StorageError(Messages.DATABASE_UNAVAILABLE)
        identity, digest, records = found
        self._identity = str(identity).encode()
        if records is not None:
            self._raw = as_bytes(records)
            self._digest = as_bytes(digest)
        return self._raw

    def _store(self, connection: Connection, current: Decoded, change: Change) -> bytes:
        """Write the change into the row; the new bytes' sha256 as the server hashed them."""
        data = change.data
        if current.raw and data.startswith(current.raw):
            # An append sends only the new blocks.
            found = connection.execute(
                APPEND, (data[len(current.raw) :], self._location.workspace)
            ).fetchone()
        else:
            found = connection.execute(REPLACE, (data, self._location.workspace)).fetchone()
        if found is None:
            raise StorageError(Messages.DATABASE_SAVE_FAILED)
        return as_bytes(found[0])

    def _published(self, change: Change, digest: bytes) -> WriteResult:
        written = change.encoded.decoded()
        self.memo.remember(written)
        self._raw, self._digest = written.raw, digest
        self._mirror(written.raw)
        return change.result(written.snapshot)

    def _backup(self, raw: bytes, change: Change) -> str | None:
        """The backup a change asks for, written to the local workspace's ``memory/`` before
        the change is committed (none without a local workspace).

        Raises:
            StorageError: it could not be written (the change is then rolled back).
        """
        if change.outcome.backup is None or self._workspace is None:
            return None
        try:
            locations = locate(self._workspace)
            locations.directory.mkdir(exist_ok=True)
            return backup_of(locations, raw, change.outcome)
        except OSError as error:
            raise StorageError(Messages.SAVE_FAILED) from error

    def _mirror(self, data: bytes) -> None:
        """Best effort: the write is committed; a mirror that cannot be written stays stale."""
        if not self._location.mirror or self._workspace is None:
            return
        with contextlib.suppress(MemoryRecordError, OSError):
            locations = locate(self._workspace)
            private_folder(locations.directory, parents=False)
            # Read-only, and only its owner's: it holds every active fact.
            atomic_write(locations.directory / MIRROR_NAME, data, mode=0o400)

    def _connect(self) -> Connection:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        connection = connect(self._location)
        self._connection = connection
        # A store dropped without close() still closes its connection.
        self._finalizer = weakref.finalize(self, close_quietly, connection)
        return connection

    def close(self) -> None:
        """Close the connection (the next use opens a new one)."""
        with self._busy:
            self._drop()

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            close_quietly(connection)

    def _with_connection(self, work: Callable[[Connection], _T]) -> _T:
        """Run ``work``; a connection that went stale is replaced once (reads only)."""
        for attempt in (1, 2):
            connection = self._connect()
            try:
                return work(connection)
            except psycopg.OperationalError:
                self._drop()
                if attempt == 2:
                    raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
            except psycopg.Error:
                self._drop()
                raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
        raise StorageError(Messages.DATABASE_UNAVAILABLE)  # not reached: attempt 2 raises

    def _create_row(self, connection: Connection) -> None:
        connection.execute(
            "INSERT INTO memquill.records (workspace, workspace_id, record_key) "
            "VALUES (%s, %s, %s) ON CONFLICT (workspace) DO NOTHING",
            (self._location.workspace, uuid.uuid4(), secrets.token_bytes(KEY_BYTES)),
        )

    def _fetch_key(self, connection: Connection) -> bytes:
        query = "SELECT record_key FROM memquill.records WHERE workspace = %s"
        found = connection.execute(query, (self._location.workspace,)).fetchone()
        if found is None:
            self._create_row(connection)
            found = connection.execute(query, (self._location.workspace,)).fetchone()
        key = as_bytes(found[0]) if found is not None else b""
        if len(key) != KEY_BYTES:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE)
        return key


@dataclass(frozen=True, slots=True)
class _RowKey:
    """The record key of a workspace row (a :class:`~memquill.store._record_key.KeySource`)."""

    backend: PostgresBackend

    def load(self) -> bytes:
        return self.backend.keyas_bytes()

    def known(self) -> tuple[bytes, ...]:
        return (self.backend.keyas_bytes(),)  # one key per row, shared by every host
