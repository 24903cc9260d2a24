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
first use; the workspace's row (and its id, which seeds revisions) on first connection.
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
from typing import Final, Literal, TypeAlias, TypeVar, cast

import psycopg
from psycopg import errors as pg_errors

from memquill.atomic import atomic_write
from memquill.errors import BusyError, MemoryRecordError, Messages, StorageError
from memquill.owner_only import private_folder
from memquill.store._backend import RecordsBackend
from memquill.store._doctor import DoctorReport, report_for
from memquill.store._memo import Decoded
from memquill.store._postgres_location import PostgresLocation, parse_location
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


Connection: TypeAlias = "psycopg.Connection[tuple[object, ...]]"
_T = TypeVar("_T")

SCHEMA_VERSION: Final = 1
MIRROR_NAME: Final = ".records-mirror.md"
_SCHEMA_LOCK: Final = 0x6D656D7175696C6C  # "memquill": serialises first-use schema creation

_CREATE: Final = (
    "CREATE SCHEMA IF NOT EXISTS memquill",
    """CREATE TABLE IF NOT EXISTS memquill.schema_version (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now())""",
    # 2097152 is MAX_STORE_BYTES (2 MiB); a test keeps the two equal.
    """CREATE TABLE IF NOT EXISTS memquill.records (
        workspace text PRIMARY KEY,
        workspace_id uuid NOT NULL UNIQUE,
        record_key bytea NOT NULL CHECK (octet_length(record_key) = 32),
        records bytea NOT NULL DEFAULT ''::bytea CHECK (octet_length(records) <= 2097152),
        digest bytea GENERATED ALWAYS AS (sha256(records)) STORED,
        updated_at timestamptz NOT NULL DEFAULT now())""",
    # Stored out of line but not compressed: every write rewrites the value, and compressing
    # up to 2 MiB of text at each write costs more than the space it saves.
    "ALTER TABLE memquill.records ALTER COLUMN records SET STORAGE EXTERNAL",
)
_VERSION: Final = "INSERT INTO memquill.schema_version (version) VALUES (%s) ON CONFLICT DO NOTHING"
# The bytes come back only when they differ from the ones this backend already holds.
# ``digest`` is sha256 of the bytes, computed by the server at each write.
_READ: Final = """
    SELECT workspace_id::text, digest, CASE WHEN digest = %(known)s THEN NULL ELSE records END
    FROM memquill.records WHERE workspace = %(name)s"""
_READ_FOR_WRITE: Final = _READ + " FOR NO KEY UPDATE"
_READ_FOR_WRITE_NOWAIT: Final = _READ + " FOR NO KEY UPDATE NOWAIT"
_APPEND: Final = (
    "UPDATE memquill.records SET records = records || %s, updated_at = now() "
    "WHERE workspace = %s RETURNING digest"
)
_REPLACE: Final = (
    "UPDATE memquill.records SET records = %s, updated_at = now() "
    "WHERE workspace = %s RETURNING digest"
)


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

    def key_bytes(self) -> bytes:
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
            _READ if lock is None else _READ_FOR_WRITE if lock == "wait" else _READ_FOR_WRITE_NOWAIT
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
            self._raw = _bytes(records)
            self._digest = _bytes(digest)
        return self._raw

    def _store(self, connection: Connection, current: Decoded, change: Change) -> bytes:
        """Write the change into the row; the new bytes' sha256 as the server hashed them."""
        data = change.data
        if current.raw and data.startswith(current.raw):
            # An append sends only the new blocks.
            found = connection.execute(
                _APPEND, (data[len(current.raw) :], self._location.workspace)
            ).fetchone()
        else:
            found = connection.execute(_REPLACE, (data, self._location.workspace)).fetchone()
        if found is None:
            raise StorageError(Messages.DATABASE_SAVE_FAILED)
        return _bytes(found[0])

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
        try:
            connection = psycopg.connect(
                self._location.conninfo,
                autocommit=True,
                connect_timeout=10,
                application_name="memquill",
            )
        except psycopg.Error:
            # libpq's message can quote the connection string, password included.
            raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
        try:
            idle = f"{round(self._location.idle_timeout * 1000)}ms"
            connection.execute(
                "SELECT set_config('idle_in_transaction_session_timeout', %s, false)", (idle,)
            )
            _ensure_schema(connection)
        except psycopg.Error:
            connection.close()
            raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        # A store dropped without close() still closes its connection.
        self._finalizer = weakref.finalize(self, _close_quietly, connection)
        return connection

    def close(self) -> None:
        """Close the connection (the next use opens a new one)."""
        with self._busy:
            self._drop()

    def _drop(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            _close_quietly(connection)

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
        key = _bytes(found[0]) if found is not None else b""
        if len(key) != KEY_BYTES:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE)
        return key


@dataclass(frozen=True, slots=True)
class _RowKey:
    """The record key of a workspace row (a :class:`~memquill.store._record_key.KeySource`)."""

    backend: PostgresBackend

    def load(self) -> bytes:
        return self.backend.key_bytes()

    def known(self) -> tuple[bytes, ...]:
        return (self.backend.key_bytes(),)  # one key per row, shared by every host


def list_workspaces(location: PostgresLocation, prefix: str) -> tuple[str, ...]:
    """The names of the workspace rows that start with ``prefix``, sorted (none before the
    schema exists; nothing is created).

    Raises:
        StorageError: the database cannot be reached or read.
    """
    try:
        with psycopg.connect(
            location.conninfo, autocommit=True, connect_timeout=10, application_name="memquill"
        ) as connection:
            found = connection.execute("SELECT to_regclass('memquill.records')").fetchone()
            if found is None or found[0] is None:
                return ()
            rows = connection.execute(
                "SELECT workspace FROM memquill.records "
                'WHERE left(workspace, length(%s)) = %s ORDER BY workspace COLLATE "C"',
                (prefix, prefix),
            ).fetchall()
    except psycopg.Error:
        # libpq's message can quote the connection string, password included.
        raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
    return tuple(str(row[0]) for row in rows)


def _close_quietly(connection: Connection) -> None:
    with contextlib.suppress(psycopg.Error):
        connection.close()


def _bytes(value: object) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(cast("bytearray", value))
    raise StorageError(Messages.DATABASE_UNAVAILABLE)


def _ensure_schema(connection: Connection) -> None:
    """Create the schema on first use (serialised by an advisory lock); refuse a newer one."""
    found = connection.execute(
        "SELECT to_regclass('memquill.records') IS NOT NULL "
        "AND to_regclass('memquill.schema_version') IS NOT NULL"
    ).fetchone()
    if not (found and found[0]):
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _CREATE:
                connection.execute(statement)
            connection.execute(_VERSION, (SCHEMA_VERSION,))
    version = connection.execute("SELECT max(version) FROM memquill.schema_version").fetchone()
    if version is None or not isinstance(version[0], int) or version[0] > SCHEMA_VERSION:
        raise StorageError(Messages.DATABASE_SCHEMA)
