"""``PostgresBackend``: the records store in PostgreSQL, a row per record version.

Each version row keeps its block's exact metadata text and content (``_postgres_rows``), so
the bytes of ``records.md`` are rebuilt exactly from the rows, and the format, revisions (sha256
of the workspace id, NUL and those bytes), tombstones and every check are the file store's. A
reader fetches only the rows changed since it last looked (each write bumps the workspace's
``seq`` and stamps the rows it wrote), with the workspace row, in one statement and no
transaction. A write is one transaction of one or two round trips, each one message of
statements (:class:`~memquill.store._postgres_sql.Script`), and is acknowledged only after
``COMMIT`` returns. Writers of one workspace are of two kinds:

- **Appending writers run together.** An operation that only appends versions and says what
  it read (:class:`~memquill.store._transaction.Reads`: a save, a keyed put, a correction
  checked by the fact's own revision) runs on the rows this backend holds, with no lock and
  no transaction; then one message begins the transaction and, in one statement
  (``memquill.append_v4``), takes the workspace's writers' advisory lock *shared* (waiting
  for a writer alone) and the workspace row's lock (held only while the server runs that
  message, never while the client works), writes the new versions only if no version written
  since the rows held touched what the operation read (its facts, keys, operations, source
  messages) and none was deleted since, numbered after the versions written since, marks the
  versions a correction supersedes (only if it wrote), and sends those back; then
  ``COMMIT``. Refused, the writer has the rows as they now are (the statement
  sent them), and runs the operation again on rows read as its transaction begins (the
  lock and the rows in a first message, the append in a second; where its revision is stale:
  ``conflict``); refused again, it runs alone. An operation that answered without
  appending, or failed, on the rows held is decided again on the rows read (they may be
  old). Writers of different facts so commit one after another in the server, while their
  clients work at once; two writers of one fact give one success and one ``conflict``.
- **Any other writer runs alone**: a forget, a compaction, a rewrite, one checked against the
  store revision, or an appending one that did more than append. It takes the advisory lock
  *exclusively* and ``SELECT … FOR NO KEY UPDATE`` on the workspace row with the rows changed
  since; then, after the operation, only the difference (new versions inserted, changed ones
  updated, removed ones deleted), the workspace row's update and ``COMMIT``.

Writers wait on the server, in order; ``lock_timeout`` turns a long wait into ``busy``. Commits
take the workspace row in ``seq`` order, so a reader's snapshot always holds a prefix of them.
The rows held are one list, extended or patched in place by what a committed write wrote or a
read fetched, never copied: a write's cost does not grow with the workspace. There is no size
bound but the workspace row's ``quota_bytes`` (none by default). A writer that freezes inside
its transaction is cut off by the server (``idle_in_transaction_session_timeout``) and its
write never happens (an appending one holds back only the writers that must be alone); a
writer that dies is rolled back. Nothing is ever written outside a transaction.

The store location is ``postgresql://user:password@host:port/database`` with options after
``#``: ``workspace=NAME`` (the row; default ``default``), ``mirror=1`` (keep a read-only copy
at ``memory/.records-mirror.md`` in the local workspace after every write) and
``idle_timeout=SECONDS`` (default 5). The URL is never logged, repeated in an error, or shown
by ``repr``. The schema is checked, and created (or a v1 one upgraded) if need be, at a
backend's first use; the workspace's row (and its id, which seeds revisions) at its first read
or write. A backend's first read checks the schema and fetches the record key in the same
round trip as the rows (one script); asked for the key first, as a write is, it reads the
workspace to get it. So a process's first write into a workspace is three round trips (four if
the row is new); every later append one, and any other write two: the lock and the rows, the
write. A backend owns no connection: each read and each write transaction borrows one from the
process's pool for the database (:mod:`memquill.store._postgres_pool`); a write whose
connection fails before its transaction did anything is retried once on a new connection, one
that fails later is reported (``storage``) and never completed by anyone. An append sent on
the rows held whose connection fails is read again and decided on the rows read, in a
transaction on a new connection: whether or not it had committed, what it read (its own
operation among it) says so, and it never lands twice. A read that finds the workspace row's
``seq`` unchanged is that statement's one row. Many workspaces of one database are read
together (:meth:`PostgresBackend.snapshots`) in one statement, one snapshot of the database:
each workspace's row and its rows changed since that backend last read, as its own read
would fetch them. What is said to the server (the schema, the
statements, opening a connection) is :mod:`memquill.store._postgres_sql`'s.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import uuid
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final, Literal, LiteralString, TypeAlias, TypeVar

import psycopg
from psycopg import errors as pg_errors

from memquill.errors import BusyError, MemoryRecordError, Messages, StorageError
from memquill.foundation.atomic import atomic_write
from memquill.foundation.collection import collection_paused
from memquill.foundation.keyfiles import KEY_BYTES
from memquill.owner_only import private_folder
from memquill.store._backend import RecordsBackend
from memquill.store._doctor import DoctorReport, report_for
from memquill.store._memo import Decoded, extended, header_of
from memquill.store._postgres_location import PostgresLocation
from memquill.store._postgres_pool import pool_for
from memquill.store._postgres_rows import Row, assemble, columns, difference, split
from memquill.store._postgres_sql import (
    APPEND,
    CREATE_WORKSPACE,
    DELETE_ROWS,
    INSERT_ROWS,
    INSERTED_ROW,
    LOCK_TIMEOUT,
    MANY,
    READ_FEW,
    READ_FOR_WRITE,
    READ_FOR_WRITE_NOWAIT,
    READ_MANY,
    READ_WITH_ROWS,
    RECORD_KEY,
    ROWS_NAMED,
    SCHEMA_PROBE,
    UPDATE_ROW,
    VERSION_FIELDS,
    WRITERS_ALONE,
    WRITERS_ALONE_NOWAIT,
    WRITERS_SHARED,
    WRITERS_SHARED_NOWAIT,
    WROTE,
    Connection,
    Script,
    as_bytes,
    ensure_schema,
    milliseconds,
    schema_in_use,
    transaction_of_scripts,
)
from memquill.store._record import Record
from memquill.store._record_key import KeySource
from memquill.store._results import Snapshot, WriteResult
from memquill.store._secrets import SecretScanner
from memquill.store._transaction import Change, Operation, apply_operation, backup_of, locate

_T = TypeVar("_T")
MIRROR_NAME: Final = ".records-mirror.md"
_NO_ROW: Final = (None, None, None, None)
"""A read's version columns when no row changed (as :data:`READ_WITH_ROWS` sends them)."""
NO_QUOTA: Final = 1 << 40
"""The bound writes are checked against in a workspace without a quota (1 TiB: in effect
none; ``doctor`` reports no capacity rather than this)."""


class _Alone(Exception):
    """An appending writer's transaction found its operation must run alone (it did more
    than append, or the workspace is not one it can append to); nothing was written."""


class _Unsure(Exception):
    """An append on the rows held could not be decided or sent on them: nothing was written
    by it, or what was is seen by the next attempt, which reads the rows first (its
    operation answered without appending, or failed, on rows that may be old; or its one
    message met a connection that failed)."""


_Mode: TypeAlias = Literal["held", "joined", "alone"]
"""How a write transaction runs: an append on the rows held, in one message; an append on
the rows read as it begins, in two; alone."""


@dataclass(frozen=True, slots=True)
class _Loaded:
    """The workspace as this backend last read or wrote it: its ``seq``, header, rows in
    file order, and its bytes or their decoding (whichever is known; ``blob``: the bytes are
    a kept blob, not rows).

    ``rows`` is the backend's one list of rows, handed on from each ``_Loaded`` to the next
    and extended or patched in place (never copied: at 100,000 rows a copy per write cost more
    than the write's statements), only with rows a committed write wrote or a read fetched
    and checked, and only under the backend's lock; a ``_Loaded`` replaced is never read
    again (a reader that kept one compares it by identity first)."""

    seq: int = 0
    header: str = ""
    rows: list[Row] = field(default_factory=list[Row])
    raw: bytes | None = b""
    blob: bool = False
    decoded: Decoded | None = None

    @property
    def data(self) -> bytes:
        """The bytes (copied out of the decoding only when asked for)."""
        if self.raw is not None:
            return self.raw
        assert self.decoded is not None
        return self.decoded.raw


@dataclass(frozen=True, slots=True)
class _Written:
    """A write: its statements and ``COMMIT`` (``script``, not yet sent), and what they leave
    once committed: its ``seq`` and header, the rows list to hold (the one held, for an
    append) and the rows to extend it with; for an append, which of its statements answers
    (:data:`~memquill.store._postgres_sql.APPEND`)."""

    script: Script
    seq: int
    header: str
    rows: list[Row]
    added: list[Row]
    answer: int = 0


@dataclass(frozen=True, slots=True)
class _Fetched:
    """What a read found: the workspace row's fields and the rows changed ``since`` a seq
    (as fetched: position, id, meta, content), not yet merged into the rows held."""

    workspace_id: object
    seq: int
    versions: int
    header: str
    since: int
    rows: list[tuple[object, ...]]


class PostgresBackend(RecordsBackend):
    """One workspace's records in PostgreSQL (see the module docstring).

    Args:
        location: the parsed store location.
        workspace: the local workspace folder (for the optional mirror file only).
    """

    kind = "postgres"

    def __init__(self, location: PostgresLocation, workspace: str | None = None) -> None:
        super().__init__(NO_QUOTA)
        self._location = location
        self._workspace = workspace
        self._pool = pool_for(location)
        self._schema_checked = False  # the schema is ensured at this backend's first use
        self._identity: bytes | None = None
        self._key: bytes | None = None
        self._quota: int | None = None  # the row's quota_bytes (``None``: none)
        # The rows last read or written: the server sends only the rows changed since.
        self._loaded = _Loaded()
        self._busy = threading.Lock()  # one operation at a time on ``_loaded``

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

    @property
    def capacity(self) -> int:
        """The workspace row's ``quota_bytes`` as last read (none: :data:`NO_QUOTA`)."""
        if self._identity is None:
            self.read()
        return self._capacity

    @property
    def quota(self) -> int | None:
        """The workspace row's ``quota_bytes`` as last read (``None``: none set)."""
        if self._identity is None:
            self.read()
        return self._quota

    def read(self) -> bytes:
        with self._busy:
            self._with_connection(self._read_consistent, checked=False)
            return self._loaded.data

    def snapshot(self) -> Snapshot:
        with self._busy:
            self._with_connection(self._read_consistent, checked=False)
            return self._current().snapshot

    def transact(
        self, operation: Operation, timeout: float, *, appends: bool = False
    ) -> WriteResult:
        with self._busy:
            if self._loaded.rows:
                # The workspace held, decoded and indexed before any transaction begins, so a
                # transaction's own work is only what changed since (never cut off as idle).
                self._current().snapshot.indexed()
            # An appending operation as one of many writers: on the rows held, then on the
            # rows as they are if another writer touched what it read; then alone.
            for mode in ("held", "joined", "alone"):
                if mode != "alone" and (
                    not appends
                    or self._quota is not None
                    or self._loaded.blob
                    or not self._loaded.rows
                    or (mode == "held" and timeout <= 0)
                ):
                    continue  # a quota counts the whole workspace; a first write makes it
                try:
                    answer = self._attempt(operation, timeout, mode=mode)
                except _Alone:
                    appends = False
                    continue
                except _Unsure:
                    continue
                if answer is not None:
                    return answer
        raise StorageError(Messages.DATABASE_SAVE_FAILED)  # not reached: alone answers

    def _attempt(self, operation: Operation, timeout: float, *, mode: _Mode) -> WriteResult | None:
        """One write transaction (see the module docstring); ``None``: not written, another
        writer touched what the operation read (it is tried again).

        Raises:
            _Alone: not written, the operation did more than append (it is run alone).
            _Unsure: not written, an append on the rows held is tried on the rows read.
        """
        held = mode == "held"
        for attempt in (1, 2):
            started = False
            try:
                # A retry never trusts an idle connection again (all may be stale). Two round
                # trips: BEGIN, the lock and the rows changed since; then the writes and COMMIT
                # (one, the operation run first on the rows held, for an append).
                with (
                    self._borrowed(fresh=attempt == 2) as connection,
                    transaction_of_scripts(connection),
                ):
                    if mode == "alone":
                        self._caught_up(connection, timeout)
                    elif not held and not self._joined(connection, timeout):
                        raise _Alone
                    started = not held
                    since = self._loaded.seq
                    current = self._current()
                    change = self._change(current, operation, held=held)
                    if isinstance(change, WriteResult):
                        return change
                    if mode != "alone" and not self._appends(change):
                        raise _Alone
                    backup = self._backup(current, change)
                    written = self._store(connection, current, change, mode=mode, timeout=timeout)
                    cursor = written.script.send()  # acknowledged only once COMMIT has returned
                    granted, others = (
                        (since + 1, []) if mode == "alone" else _granted(cursor, written.answer)
                    )
            except pg_errors.LockNotAvailable:
                raise BusyError(Messages.LOCK_HELD) from None
            except psycopg.OperationalError:
                # The pool closes a connection left broken or inside a transaction.
                if held:
                    # Committed or not, the rows read next show it: the append, guarded by
                    # what it read (its own operation among it), never lands twice.
                    raise _Unsure from None
                if started or attempt == 2:
                    raise StorageError(Messages.DATABASE_SAVE_FAILED) from None
                continue  # a connection gone stale before the transaction did anything
            except psycopg.Error:
                raise StorageError(Messages.DATABASE_SAVE_FAILED) from None
            if granted is None:
                if not others:
                    raise _Alone  # the workspace row is gone or another's: read by name
                self._took(others, since)  # what the others wrote, read on the way
                return None
            if granted != since + 1:
                return replace(self._rebased(change, written, granted, others), backup=backup)
            return replace(self._published(change, written), backup=backup)
        raise StorageError(Messages.DATABASE_SAVE_FAILED)  # not reached: attempt 2 raises

    def _change(
        self, current: Decoded, operation: Operation, *, held: bool
    ) -> Change | WriteResult:
        """The operation run on ``current``. ``held``: on the rows held, which may be old, so
        only an append is taken from it (checked against what was written since when it is
        committed); an answer without one, or a failure, is decided again on the rows read.

        Raises:
            _Unsure: ``held``, and the operation did not append.
        """
        if not held:
            return apply_operation(current, operation, self._capacity)
        try:
            change = apply_operation(current, operation, self._capacity)
        except MemoryRecordError:
            raise _Unsure from None
        if isinstance(change, WriteResult):
            raise _Unsure
        return change

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
            return report_for(
                None, failure, secrets=secrets, used_bytes=len(raw), capacity=self._quota
            )
        return report_for(
            snapshot,
            None,
            secrets=secrets,
            used_bytes=len(raw),
            record_key=record_key,
            capacity=self._quota,  # no quota: no capacity to report, not NO_QUOTA
        )

    def record_key(self) -> KeySource:
        # In the row, so every host sharing the store keys hashes alike; never exported.
        return _RowKey(self)

    def keyas_bytes(self) -> bytes:
        """The workspace row's record key (read once; it never changes). It comes with a
        first read of the workspace (one round trip for both: a write asks for the key before
        it reads, and a first write would otherwise take in every row under the lock)."""
        if self._key is None:
            with self._busy:
                self._with_connection(self._read_consistent, checked=False)
                if self._key is None:  # not a key this version can use: say so
                    self._key = self._with_connection(self._fetch_key)
        return self._key

    def identity_now(self) -> bytes:
        """The identity the last statement saw (set by every read of the row)."""
        assert self._identity is not None
        return self._identity

    # -- internals -----------------------------------------------------------------------

    def _read_consistent(self, connection: Connection) -> None:
        """Bring the workspace up to date with one statement (its own snapshot of the workspace
        row and its rows): no transaction, so however long the rows take to arrive and to be
        made into the workspace, the server never ends the read for idling in one (a first
        read of 100,000 rows on a busy machine did, at idle_timeout). Unchanged since the last
        read: that statement's one row, no version in it. A first read takes in every row: the
        collector is paused meanwhile (:mod:`memquill.foundation.collection`)."""
        with collection_paused():
            while True:
                since = self._since()
                found = self._read_rows(connection, since)
                if not found:
                    found = self._read_rows(connection, since, create=True)
                if not found:
                    raise StorageError(Messages.DATABASE_UNAVAILABLE)
                if self._took(found, since):
                    return

    def _read_rows(
        self, connection: Connection, since: int, *, create: bool = False
    ) -> list[tuple[object, ...]]:
        """:data:`READ_WITH_ROWS`'s rows; until this backend holds the record key, in the same
        round trip (one script) the key, and on its first use the schema's check
        (:data:`SCHEMA_PROBE`), so a process's first read of a workspace is one round trip,
        not five. ``create``: the workspace's row is made first (if missing), in that script."""
        name = self._location.workspace
        if self._schema_checked and self._key is not None and not create:
            return connection.execute(READ_WITH_ROWS, (since, name)).fetchall()
        checking = not self._schema_checked
        script = Script(connection)
        if checking:
            for statement in SCHEMA_PROBE:
                script.add(statement)
        if create:
            script.add(CREATE_WORKSPACE, self._new_row())
        script.add(RECORD_KEY, (name,))
        script.add(READ_WITH_ROWS, (since, name))
        try:
            cursor = script.send()
        except psycopg.Error:
            # No schema yet, or not one this version reads: the long way, which makes it or
            # says what is wrong with it.
            if self._schema_checked:
                raise
            self._checked(connection)
            return self._read_rows(connection, since, create=create)
        if checking:
            probed = cursor.fetchone()
            cursor.nextset()
            version = cursor.fetchone()
            cursor.nextset()
            if not schema_in_use(probed, version):
                self._checked(connection)  # v1 workspaces waiting: moved first, then read
                return self._read_rows(connection, since, create=create)
            self._schema_checked = True
        if create:
            cursor.nextset()
        key = cursor.fetchone()
        cursor.nextset()
        if self._key is None and key is not None:
            found = as_bytes(key[0])
            self._key = found if len(found) == KEY_BYTES else None
        return cursor.fetchall()

    def _since(self) -> int:
        """The ``seq`` whose rows this backend holds (0: none, or a kept blob: read them all)."""
        return 0 if self._identity is None or self._loaded.blob else self._loaded.seq

    def _took(self, found: Sequence[Sequence[object]], since: int) -> bool:
        """Take in what a read of :data:`READ_WITH_ROWS`'s columns found (the rows changed
        ``since``); ``False``: read again, with every row (the workspace row names another
        workspace than the one held, or the rows fetched leave a gap)."""
        workspace_id, seq, versions, header, blob, quota = found[0][:6]
        identity = str(workspace_id).encode()
        if identity != self._identity:
            self._loaded = _Loaded()
            self._identity = identity
            if since:
                return False  # another workspace under the name: read all its rows
        self._set_quota(quota)
        assert isinstance(seq, int) and isinstance(versions, int) and isinstance(header, str)
        if blob is not None:
            self._loaded = _Loaded(seq, "", [], as_bytes(blob), blob=True)
            return True
        if not self._loaded.blob and seq == self._loaded.seq:
            return True
        rows = [tuple(row[6:]) for row in found if row[6] is not None]
        fetched = _Fetched(workspace_id, seq, versions, header, since, rows)
        merged = self._merged(fetched)
        if merged is not None:
            self._loaded = merged
            return True
        self._gap(fetched)  # the next round reads every row
        return False

    @classmethod
    def snapshots(cls, backends: Sequence[RecordsBackend]) -> list[Snapshot]:
        """Each backend's :meth:`snapshot`, the backends of one database read together: one
        statement for all of them (:data:`READ_MANY`, one snapshot of the database), which
        sends, for each, its workspace row and only the rows changed since the ``seq`` it
        holds (a workspace as held: nothing). A backend whose row is missing, whose
        rows leave a gap, or that read or wrote meanwhile in another thread reads on its own.
        """
        found: list[Snapshot | None] = [None] * len(backends)
        groups: dict[int, list[tuple[int, PostgresBackend]]] = {}
        for place, backend in enumerate(backends):
            if isinstance(backend, PostgresBackend):
                groups.setdefault(id(backend._pool), []).append((place, backend))
        for group in groups.values():
            for place, snapshot in zip(
                (place for place, _ in group),
                cls._read_many([backend for _, backend in group]),
                strict=True,
            ):
                found[place] = snapshot
        return [
            snapshot if snapshot is not None else backend.snapshot()
            for snapshot, backend in zip(found, backends, strict=True)
        ]

    @classmethod
    def _read_many(cls, backends: list[PostgresBackend]) -> list[Snapshot]:
        """:meth:`snapshots` for backends of one pool."""
        # What each backend holds as the statement is built: taken in only if still held.
        # Flat lists, not a tuple per backend: 10,000 tuples alive through the read made
        # the collector's full passes (over every object of the process) several times as
        # frequent.
        loads = [backend._loaded for backend in backends]
        identities = [backend._identity for backend in backends]
        held = [backend._since() for backend in backends]
        # An id goes with a seq it holds rows at: with none, every row is read (as alone).
        asked = json.dumps(
            [
                [backend._location.workspace for backend in backends],
                [
                    None if identity is None or not since else identity.decode()
                    for identity, since in zip(identities, held, strict=True)
                ],
                held,
                [backend._quota for backend in backends],
            ]
        )

        def read(connection: Connection) -> list[tuple[object, ...]]:
            if not all(backend._schema_checked for backend in backends):
                ensure_schema(connection)
            statement = READ_MANY if len(backends) >= MANY else READ_FEW
            return connection.execute(statement, (asked,)).fetchall()

        try:
            rows = backends[0]._pool.run(read)
        except psycopg.Error:
            # libpq's message can quote the connection string, password included.
            raise StorageError(Messages.DATABASE_UNAVAILABLE) from None
        for backend in backends:
            backend._schema_checked = True
        each: dict[int, list[tuple[object, ...]]] = {}
        for row in rows:
            place = row[0]
            assert isinstance(place, int)
            each.setdefault(place - 1, []).append(row[1:])
        snapshots: list[Snapshot] = []
        for place, backend in enumerate(backends):
            loaded, identity, since_held = loads[place], identities[place], held[place]
            mine = each.get(place)
            with backend._busy:
                if backend._loaded is loaded and backend._identity == identity:
                    if mine is None:
                        # As held: the same id, seq and quota (the statement sent nothing).
                        snapshots.append(backend._current().snapshot)
                        continue
                    if mine[0][0] is not None:
                        if str(mine[0][0]).encode() != identity:
                            # The statement sent every row of another workspace under the name.
                            backend._loaded, backend._identity, since_held = _Loaded(), None, 0
                        if backend._took(mine, since_held):
                            snapshots.append(backend._current().snapshot)
                            continue
            snapshots.append(backend.snapshot())  # on its own: missing, a gap, or read meanwhile
        return snapshots

    def _current(self) -> Decoded:
        """The workspace as last fetched, decoded (reusing what the memo holds)."""
        loaded = self._loaded
        if loaded.decoded is None:
            assert self._identity is not None
            self._loaded = replace(loaded, decoded=self.memo.decode(self._identity, loaded.data))
        assert self._loaded.decoded is not None
        return self._loaded.decoded

    def _caught_up(self, connection: Connection, timeout: float) -> None:
        """Begin the write's transaction, take the workspace row's lock (waiting up to
        ``timeout`` seconds; none: not waiting) and bring the workspace up to date, in one
        round trip: the lock's statement and the rows changed since this backend last looked
        (:data:`ROWS_NAMED`, run once the lock is granted) go in one script."""
        query = READ_FOR_WRITE if timeout > 0 else READ_FOR_WRITE_NOWAIT
        name = self._location.workspace
        lead: list[tuple[LiteralString, tuple[object, ...]]] = [("BEGIN", ())]
        if timeout > 0:
            lead.append((LOCK_TIMEOUT, (milliseconds(timeout),)))
        lead.append((WRITERS_ALONE if timeout > 0 else WRITERS_ALONE_NOWAIT, (name,)))
        created = False
        while True:
            since = self._since()
            script = Script(connection)
            for statement, params in lead:
                script.add(statement, params)
            script.add(query, (name,))
            script.add(ROWS_NAMED, (since, name))
            cursor = script.send()
            for _ in lead[:-1]:
                cursor.nextset()
            if lead and timeout <= 0 and cursor.fetchone() != (True,):
                raise BusyError(Messages.LOCK_HELD)  # appending writers hold the workspace
            if lead:
                cursor.nextset()
            lead = []  # the transaction is open
            found = cursor.fetchone()
            cursor.nextset()
            rows = cursor.fetchall()
            if found is None:
                if created:
                    raise StorageError(Messages.DATABASE_UNAVAILABLE)
                self._create_row(connection)
                created = True
                continue
            if self._took([(*found, *row) for row in rows] or [(*found, *_NO_ROW)], since):
                return

    def _joined(self, connection: Connection, timeout: float) -> bool:
        """Begin the write's transaction as one of the workspace's appending writers (their
        lock shared, waiting up to ``timeout`` seconds; none: not waiting) and bring the
        workspace up to date, in one round trip (:data:`READ_WITH_ROWS`: one snapshot of the
        workspace row and its rows). ``False``: the workspace row is missing or its rows leave
        a gap (the writer goes on alone, which makes or reads it all)."""
        name = self._location.workspace
        since = self._since()
        script = Script(connection)
        script.add("BEGIN")
        if timeout > 0:
            script.add(LOCK_TIMEOUT, (milliseconds(timeout),))
            script.add(WRITERS_SHARED, (name,))
        else:
            script.add(WRITERS_SHARED_NOWAIT, (name,))
        script.add(READ_WITH_ROWS, (since, name))
        cursor = script.send()
        cursor.nextset()  # past BEGIN
        if timeout > 0:
            cursor.nextset()  # past lock_timeout
        elif cursor.fetchone() != (True,):
            raise BusyError(Messages.LOCK_HELD)  # a writer alone holds the workspace
        cursor.nextset()
        found = cursor.fetchall()
        return bool(found) and self._took(found, since) and bool(self._loaded.rows)

    def _appends(self, change: Change) -> bool:
        """Whether ``change`` may be committed among other appending writers: it only appends
        versions (and marks the ones its corrections supersede), makes no backup, and its
        operation said what it read."""
        loaded = self._loaded
        return (
            change.encoded.tail is not None
            and change.outcome.reads is not None
            and change.outcome.backup is None
            and not loaded.blob
            and bool(loaded.rows)
        )

    def _gap(self, fetched: _Fetched) -> None:
        """The rows fetched do not follow the ones held: hold none (all are read next).

        Raises:
            StorageError: they were all the rows already (out of order: not memquill's).
        """
        if fetched.since == 0:
            raise StorageError(Messages.DATABASE_UNAVAILABLE)
        self._loaded = _Loaded()

    def _set_quota(self, quota: object) -> None:
        self._quota = quota if isinstance(quota, int) else None
        self._capacity = NO_QUOTA if self._quota is None else self._quota

    def _merged(self, fetched: _Fetched) -> _Loaded | None:
        """The workspace: the rows held, with the ones fetched in their places (``None``: they
        leave a gap, so they are not the rows this backend knew, and nothing is changed). The
        rows held are patched in place: only the rows fetched cost anything."""
        last = self._loaded
        rows = [] if last.blob else last.rows
        held = len(rows)
        seq, versions, header = fetched.seq, fetched.versions, fetched.header
        length = held  # checked before anything is changed: no gap, ``versions`` rows left
        for position, *_ in fetched.rows:
            assert isinstance(position, int)
            if position > length:
                return None  # a gap
            length += position == length
        if versions > length:
            return None
        rewritten = False  # a row already known changed its bytes
        for position, record_id, meta, content in fetched.rows:
            assert isinstance(position, int)
            row = Row.of(str(record_id), str(meta), str(content))
            if position < len(rows):
                rewritten = rewritten or row.block != rows[position].block
                rows[position] = row
            else:
                rows.append(row)
        del rows[versions:]
        if held and versions >= held and not rewritten and header == last.header and last.decoded:
            # Only rows added at the end (an appended correction's superseded row keeps its
            # bytes): decode just their blocks, as a file store decodes another writer's
            # append, instead of the whole workspace again.
            tail = b"".join(row.block for row in rows[held:])
            decoded = extended(last.decoded, tail) if tail else last.decoded
            if decoded is not None:
                self.memo.remember(decoded)
                return _Loaded(seq, header, rows, None, decoded=decoded)
        return _Loaded(seq, header, rows, assemble(header, rows))

    def _store(
        self,
        connection: Connection,
        current: Decoded,
        change: Change,
        *,
        mode: _Mode = "alone",
        timeout: float = 0.0,
    ) -> _Written:
        """The change's difference to the rows and ``COMMIT`` as one script (one round trip,
        sent by the caller), with what the workspace then is (the rows held are changed only
        once committed). Not ``alone``: an append among other appending writers
        (:meth:`_shared`; ``held``: the whole transaction, waiting up to ``timeout`` seconds
        for a writer alone)."""
        loaded = self._loaded
        encoded = change.encoded
        records = encoded.records
        seq = loaded.seq + 1
        workspace_id = self.identity_now().decode()
        script = Script(connection)
        if encoded.tail is not None and not loaded.blob and loaded.rows:
            header = loaded.header
            added = split(encoded.tail.decode(), 0, records[len(loaded.rows) :])
            start = len(loaded.rows)
            inserts = [(start + n, row, record) for n, (row, record) in enumerate(added)]
            # An appended correction leaves the bytes of the version it supersedes as they
            # are (a v2 file implies its status): only that row's indexed columns change. The
            # draft noted which places it replaced, so no record is compared but those.
            before = current.snapshot.records
            updates: list[tuple[int, Row, Record]] = [
                (position, loaded.rows[position], records[position])
                for position in sorted(change.replaced)
                if records[position] is not before[position]
            ]
            deletes: list[str] = []
            rows, appended = loaded.rows, [row for row, _ in added]
            if mode != "alone":
                answer = self._shared(
                    script, change, inserts, updates, timeout=timeout if mode == "held" else None
                )
                return _Written(script, seq, header, rows, appended, answer)
        else:
            data = change.data
            header = header_of(data[:128]) or ""
            pairs = split(data.decode(), len(header), records)
            if loaded.blob:
                script.add("DELETE FROM memquill.versions WHERE workspace_id = %s", (workspace_id,))
            found = difference(() if loaded.blob else loaded.rows, pairs)
            inserts, updates, deletes = found.inserts, found.updates, found.deletes
            rows, appended = [row for row, _ in pairs], []
        if deletes:
            script.add(DELETE_ROWS, (workspace_id, deletes))
        for position, row, record in updates:
            script.add(UPDATE_ROW, (position, *columns(row, record), seq, workspace_id, row.id))
        script.add_rows(
            INSERT_ROWS,
            INSERTED_ROW,
            [
                (workspace_id, row.id, position, *columns(row, record), seq)
                for position, row, record in inserts
            ],
        )
        versions = len(rows) + len(appended)
        script.add(WROTE, (seq, versions, header, encoded.size, workspace_id))
        script.add("COMMIT")
        return _Written(script, seq, header, rows, appended)

    def _shared(
        self,
        script: Script,
        change: Change,
        inserts: Sequence[tuple[int, Row, Record]],
        updates: Sequence[tuple[int, Row, Record]],
        *,
        timeout: float | None,
    ) -> int:
        """An append's statements among other appending writers, and which of them answers:
        ``timeout`` given (the append was run on the rows held), first ``BEGIN``; then the one
        statement (:data:`APPEND`) that, waiting up to ``timeout`` seconds for the locks, takes
        the writers' lock shared and the workspace row's (held only while the server runs
        this message), writes the versions only if nothing written since touched what the
        operation read, numbering them after the versions written since, marks the versions
        its corrections supersede, and sends back its ``seq`` and those versions; then
        ``COMMIT``."""
        loaded = self._loaded
        reads = change.outcome.reads
        tail = change.encoded.tail
        assert reads is not None and tail is not None
        if timeout is not None:
            script.add("BEGIN")
        answer = script.count
        script.add(
            APPEND,
            (
                None if timeout is None else milliseconds(timeout),
                self._location.workspace,
                self.identity_now().decode(),
                loaded.header,
                loaded.seq,
                sorted(reads.roots),
                sorted(reads.keys),
                sorted(reads.hashes),
                sorted(source.encode() for source in reads.sources),
                len(tail),
                len(inserts),
                [row.id for _, row, _ in updates],
                _as_json(updates, start=None),
                _as_json(inserts, start=len(loaded.rows)),
            ),
        )
        script.add("COMMIT")
        return answer

    def _rebased(
        self, change: Change, stored: _Written, granted: int, others: list[tuple[object, ...]]
    ) -> WriteResult:
        """Hold what an append committed after other writers' versions wrote (``others``, as
        :data:`APPEND_RESULT` sent them): theirs taken in as a read takes them, then this
        write's versions, decoded from their blocks alone."""
        if not self._took(others, self._loaded.seq):  # never expected: read it all again
            self._with_connection(self._read_consistent, checked=False)
            return change.result(self._current().snapshot)
        loaded = self._loaded
        before = self._current()
        loaded.rows.extend(stored.added)
        decoded = extended(before, b"".join(row.block for row in stored.added))
        if decoded is None:  # never expected: its blocks decoded before it was written
            self._loaded = _Loaded(
                granted, loaded.header, loaded.rows, assemble(loaded.header, loaded.rows)
            )
            decoded = self._current()
        else:
            self.memo.remember(decoded)
            self._loaded = _Loaded(granted, loaded.header, loaded.rows, None, decoded=decoded)
        if self._location.mirror:
            self._mirror(decoded.raw)  # the bytes are copied out only for a mirror
        return change.result(decoded.snapshot)

    def _published(self, change: Change, stored: _Written) -> WriteResult:
        """Hold what a committed write wrote (the rows list extended in place)."""
        written = change.encoded.decoded()
        self.memo.remember(written)
        stored.rows.extend(stored.added)
        self._loaded = _Loaded(stored.seq, stored.header, stored.rows, None, decoded=written)
        if self._location.mirror:
            self._mirror(written.raw)
        return change.result(written.snapshot)

    def _backup(self, current: Decoded, change: Change) -> str | None:
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
            return backup_of(locations, current.raw, change.outcome)
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

    @contextlib.contextmanager
    def _borrowed(self, *, fresh: bool = False) -> Generator[Connection]:
        """A connection of the database's pool, the schema ensured on this backend's first
        use (so an upgrade or a newer schema is seen by every backend opened after it)."""
        with self._pool.connection(fresh=fresh) as connection:
            yield self._checked(connection)

    def _checked(self, connection: Connection) -> Connection:
        """``connection``, the schema ensured first on this backend's first use."""
        if not self._schema_checked:
            ensure_schema(connection)
            self._schema_checked = True
        return connection

    def close(self) -> None:
        """Nothing to close: connections are borrowed per read or write from the process's
        pool for the database (:mod:`memquill.store._postgres_pool`), which keeps them."""

    def _with_connection(self, work: Callable[[Connection], _T], *, checked: bool = True) -> _T:
        """Run ``work`` on a borrowed connection; one that went stale is replaced once
        (reads only: :meth:`~memquill.store._postgres_pool.Pool.run`). ``checked``: the
        schema is ensured first on this backend's first use (else ``work`` sees to it)."""
        try:
            return self._pool.run(
                lambda connection: work(self._checked(connection) if checked else connection)
            )
        except psycopg.Error:
            # libpq's message can quote the connection string, password included.
            raise StorageError(Messages.DATABASE_UNAVAILABLE) from None

    def _create_row(self, connection: Connection) -> None:
        connection.execute(CREATE_WORKSPACE, self._new_row())

    def _new_row(self) -> tuple[object, ...]:
        """:data:`CREATE_WORKSPACE`'s parameters: the name, a new id and a new record key."""
        return (self._location.workspace, uuid.uuid4(), secrets.token_bytes(KEY_BYTES))

    def _fetch_key(self, connection: Connection) -> bytes:
        found = connection.execute(RECORD_KEY, (self._location.workspace,)).fetchone()
        if found is None:
            self._create_row(connection)
            found = connection.execute(RECORD_KEY, (self._location.workspace,)).fetchone()
        key = as_bytes(found[0]) if found is not None else b""
        if len(key) != KEY_BYTES:
            raise StorageError(Messages.RECORD_KEY_UNAVAILABLE)
        return key


def _granted(
    cursor: psycopg.ClientCursor[tuple[object, ...]], answer: int
) -> tuple[int | None, list[tuple[object, ...]]]:
    """What an append's message (:meth:`PostgresBackend._shared`) answered in its statement
    ``answer``: the ``seq`` it was granted (``None``: refused, nothing written) and the
    versions others wrote since the rows it held, as :data:`READ_WITH_ROWS` sends them (none:
    the workspace row is gone)."""
    for _ in range(answer):
        cursor.nextset()  # past the locks
    found = cursor.fetchall()
    granted = found[0][0] if found else None
    assert granted is None or isinstance(granted, int)
    return granted, [tuple(row[1:]) for row in found]


def _as_json(versions: Sequence[tuple[int, Row, Record]], *, start: int | None) -> str:
    """``versions`` as :data:`~memquill.store._postgres_sql.APPEND` takes them (``start``:
    where the added ones begin, each given its place after it as ``ord``)."""
    objects: list[dict[str, object]] = []
    for position, row, record in versions:
        values: dict[str, object] = dict(
            zip(VERSION_FIELDS, (row.id, *columns(row, record)), strict=True)
        )
        source = values["source_key"]
        values["source_key"] = source.hex() if isinstance(source, bytes) else None
        if start is not None:
            values["ord"] = position - start
        objects.append(values)
    return json.dumps(objects, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class _RowKey:
    """The record key of a workspace row (a :class:`~memquill.store._record_key.KeySource`)."""

    backend: PostgresBackend

    def load(self) -> bytes:
        return self.backend.keyas_bytes()

    def known(self) -> tuple[bytes, ...]:
        return (self.backend.keyas_bytes(),)  # one key per row, shared by every host
