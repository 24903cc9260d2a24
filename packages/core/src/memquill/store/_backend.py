"""The records backend seam: where a store's ``records.md`` bytes live and how they change.

A backend has an identity that seeds revisions, ``read() -> bytes``, and ``transact(operation,
timeout)``, which runs the store's pure operation on the current bytes and publishes the result
atomically or not at all. Everything else (the format, revisions, idempotency, tombstones, the
capacity check) is the same code for every backend.

- :class:`FileBackend`: ``memory/records.md`` in the workspace, the kernel lock and the atomic
  rename (``_transaction.py``), exactly as before; its identity is the workspace's real path.
  It also names the *conflict copies* beside its file (:func:`conflict_copies`): Syncthing,
  Dropbox, Nextcloud/ownCloud and OneDrive cannot merge two machines' edits of one file; each
  keeps one version as ``records.md`` and renames the other (the names are in
  :func:`memquill.private_paths.is_records_conflict_copy`). The facts only the renamed copy
  holds are then missing from memory until it is merged back (``memquill sync resolve``).
  Search, ``doctor`` and ``memquill sync status`` name the copies waiting; the read tools
  never serve them (they are private paths).
- ``PostgresBackend`` (``_postgres.py``, the ``memquill[postgres]`` extra): a row per record
  version, from which the exact bytes are rebuilt; its identity is the workspace id stored in
  the workspace's row.

:func:`open_backend` picks one from a store location: ``None`` or ``"file"`` for the file, a
``postgresql://`` URL for the database.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from memquill.errors import BusyError, InvalidInputError, MemquillError, Messages, StorageError
from memquill.private_paths import is_records_conflict_copy
from memquill.store._codec import MAX_STORE_BYTES
from memquill.store._lock import lock_is_held
from memquill.store._memo import RecordsMemo
from memquill.store._record_key import KeySource, RecordKey
from memquill.store._results import Snapshot, WriteResult
from memquill.store._transaction import (
    Operation,
    locate,
    read_raw,
    read_settled,
    write_locked,
)

if TYPE_CHECKING:
    from memquill.store._doctor import DoctorReport
    from memquill.store._secrets import SecretScanner

STORE_ENV: Final = "MEMQUILL_STORE"
"""The environment variable every surface reads the store location from (unless given)."""
FILE: Final = "file"
"""The store location of the workspace's own ``memory/records.md`` (the default)."""
_DATABASE_SCHEMES: Final = ("postgresql://", "postgres://")


class RecordsBackend(ABC):
    """Where one store's records live (see the module docstring)."""

    kind: str = ""
    """``file`` or ``postgres``."""

    def __init__(self, capacity: int = MAX_STORE_BYTES) -> None:
        # The last file this backend read or wrote; only ever trusted for identical bytes.
        self.memo = RecordsMemo()
        self._capacity = capacity

    @property
    def capacity(self) -> int:
        """The largest records file, in bytes (``docs/record-format.md``; a database store's
        is its workspace's quota)."""
        return self._capacity

    @property
    def quota(self) -> int | None:
        """The capacity to report to a person: :attr:`capacity`, or ``None`` where there is
        none (a database workspace without a quota, whose writes are still bounded)."""
        return self.capacity

    @abstractmethod
    def identity(self) -> bytes:
        """What seeds this store's revisions."""

    @abstractmethod
    def read(self) -> bytes:
        """The exact bytes of ``records.md`` now (empty when there is none yet).

        Raises:
            CapacityError, UnsafePathError, StorageError.
        """

    @abstractmethod
    def transact(
        self, operation: Operation, timeout: float, *, appends: bool = False
    ) -> WriteResult:
        """Run ``operation`` on the current records and publish its draft atomically (nothing
        is written unless it reports ``saved``), waiting up to ``timeout`` s for other writers.

        ``appends``: the operation is expected only to append versions and to say what it
        read (:class:`~memquill.store._transaction.Reads`), so a backend may run it beside
        other such writers (PostgreSQL does); one that did more is run again alone.

        Raises:
            whatever ``operation`` raises; BusyError, CapacityError, ConflictError,
            CorruptError, UnsafePathError, StorageError.
        """

    def snapshot(self) -> Snapshot:
        """The store now, decoded (only what this backend has not seen already)."""
        raw = self.read()
        return self.memo.decode(self.identity(), raw).snapshot

    @classmethod
    def snapshots(cls, backends: Sequence[RecordsBackend]) -> list[Snapshot]:
        """Each of ``backends``' :meth:`snapshot`, in order; a kind that reads many of its
        workspaces together (``PostgresBackend``: one statement) overrides this."""
        return [backend.snapshot() for backend in backends]

    def recent(self) -> Snapshot | None:
        """The store as this backend last read or wrote it, without reading (``None``: it
        has not yet); possibly stale."""
        last = self.memo.last
        return None if last is None else last.snapshot

    def close(self) -> None:  # noqa: B027  (optional: most backends hold nothing)
        """Let go of connections (a file backend holds none between calls)."""

    @abstractmethod
    def check_writable(self) -> None:
        """Raise when a write could not run now (no access, or another writer holds it)."""

    @abstractmethod
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
        """Inspect the store (see :func:`memquill.store._doctor.run_doctor`)."""

    @abstractmethod
    def record_key(self) -> KeySource:
        """Where this store's record key comes from (see :mod:`memquill.store._record_key`)."""

    def conflict_copies(self) -> tuple[str, ...]:
        """Copies of ``records.md`` a file-sync tool left beside it (a database has none)."""
        return ()


class FileBackend(RecordsBackend):
    """``memory/records.md`` in the workspace: today's store, unchanged in behaviour."""

    kind = FILE

    def __init__(self, workspace: str, capacity: int = MAX_STORE_BYTES) -> None:
        super().__init__(capacity)
        self._workspace = workspace

    def __repr__(self) -> str:
        return f"FileBackend({self._workspace!r})"

    def identity(self) -> bytes:
        return locate(self._workspace).identity

    def read(self) -> bytes:
        return read_raw(locate(self._workspace), self.capacity)

    def snapshot(self) -> Snapshot:
        locations = locate(self._workspace)  # one path check for both identity and bytes
        decode = partial(self.memo.decode, locations.identity)
        return read_settled(locations, decode, self.capacity).snapshot

    def transact(
        self, operation: Operation, timeout: float, *, appends: bool = False
    ) -> WriteResult:
        # One writer at a time on a file: the lock is the file's.
        return write_locked(self._workspace, timeout, operation, self.memo, self.capacity)

    def check_writable(self) -> None:
        locations = locate(self._workspace)
        writable = locations.directory if locations.directory.exists() else locations.root
        if not os.access(writable, os.W_OK | os.X_OK):
            raise StorageError(Messages.PREFLIGHT_UNAVAILABLE)
        if lock_is_held(locations.lock):
            raise BusyError(Messages.LOCK_HELD)

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
        # Loaded by the first check, never by a read (cold start).
        from memquill.store._doctor import run_doctor

        return run_doctor(
            self._workspace,
            secrets=secrets,
            fix=fix,
            lock_timeout=lock_timeout,
            now=now,
            record_key=record_key,
            expected_revision=expected_revision,
            capacity=self.capacity,
        )

    def record_key(self) -> KeySource:
        # The user's key, outside every workspace (docs/security.md says how to move it).
        return RecordKey()

    def conflict_copies(self) -> tuple[str, ...]:
        try:
            directory = locate(self._workspace).directory
        except MemquillError:  # an unusable memory/ is reported by the read itself
            return ()
        return conflict_copies(directory)


def resolve_location(given: str | None) -> str:
    """The store location to use: ``given``, else ``$MEMQUILL_STORE``, else ``file``."""
    return given or os.environ.get(STORE_ENV) or FILE


def is_database(location: str | None) -> bool:
    """Whether ``location`` names a database (a ``postgresql://`` URL)."""
    return bool(location) and str(location).startswith(_DATABASE_SCHEMES)


def database_workspaces(location: str, prefix: str = "") -> tuple[str, ...]:
    """The workspace rows of the database store at ``location`` whose names start with
    ``prefix``, sorted byte-wise (the ``workspace=`` option of ``location`` is not used).

    Raises:
        InvalidInputError: ``location`` is not a ``postgresql://`` URL.
        StorageError: the database cannot be reached, or the ``memquill[postgres]`` extra is
            missing.
    """
    names = database_listing(location, prefix, None).names
    assert names is not None  # asked without a mark: the names always come
    return names


class Listing(NamedTuple):
    """The workspace rows under a prefix, as :func:`database_listing` found them."""

    mark: str | None
    """Changes whenever a row under the prefix is written, made, removed, renamed or given
    a quota; ``None``: none can be given (a row is bytes kept whole, or the database is v1's)."""
    names: tuple[str, ...] | None
    """The rows' names, sorted byte-wise; ``None``: the mark is the one held."""
    hashes: tuple[int | None, ...]
    """Each name's row hash, which changes as the mark does for that row (``None``: none)."""
    versions: int = 0
    """How many record versions the rows hold (a v1 database's: 0, not counted)."""


def database_listing(location: str, prefix: str, held: str | None) -> Listing:
    """:func:`database_workspaces` with a mark: the mark of the rows whose names start with
    ``prefix``, and their names, sorted, with each row's hash; or no names when the mark is
    ``held``: no row there was written, made, removed or given a quota since the caller took
    it, and nothing was sent but the mark.

    Raises:
        InvalidInputError: ``location`` is not a ``postgresql://`` URL.
        StorageError: the database cannot be reached, or the ``memquill[postgres]`` extra is
            missing.
    """
    if not is_database(location):
        raise InvalidInputError(Messages.STORE_LOCATION)
    try:
        from memquill.store._postgres_location import parse_location
        from memquill.store._postgres_pool import list_workspaces
    except ImportError:
        raise StorageError(Messages.DATABASE_DRIVER) from None
    return list_workspaces(parse_location(location), prefix, held)


def read_together(backends: Sequence[RecordsBackend]) -> list[Snapshot]:
    """Each backend's :meth:`~RecordsBackend.snapshot`, in order, the backends of one kind
    read together (:meth:`RecordsBackend.snapshots`): the workspaces of one database in one
    statement, each sending only what changed since that backend last read it."""
    kinds: dict[type[RecordsBackend], list[int]] = {}
    for place, backend in enumerate(backends):
        kinds.setdefault(type(backend), []).append(place)
    found: dict[int, Snapshot] = {}
    for kind, places in kinds.items():
        read = kind.snapshots([backends[place] for place in places])
        found.update(zip(places, read, strict=True))
    return [found[place] for place in range(len(backends))]


def open_backend(
    workspace: str, location: str | None = None, capacity: int = MAX_STORE_BYTES
) -> RecordsBackend:
    """The backend a store location names (``None`` or ``file``: the workspace's file), with
    ``capacity`` bytes (a database store's capacity is its workspace row's quota instead).

    Nothing is connected or read yet.

    Raises:
        InvalidInputError: the location is neither ``file`` nor a ``postgresql://`` URL (the
            message never repeats it: it may hold a password).
        StorageError: a database location, but the ``memquill[postgres]`` extra is missing.
    """
    if location is None or location == FILE:
        return FileBackend(workspace, capacity)
    if not is_database(location):
        raise InvalidInputError(Messages.STORE_LOCATION)
    try:
        from memquill.store._postgres import PostgresBackend
        from memquill.store._postgres_location import parse_location
    except ImportError:
        raise StorageError(Messages.DATABASE_DRIVER) from None
    return PostgresBackend(parse_location(location), workspace)


def conflict_copies(directory: Path) -> tuple[str, ...]:
    """The conflict copies in ``directory`` (a workspace's ``memory/``), workspace-relative
    and sorted; whatever their file type (reading them checks that)."""
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if is_records_conflict_copy(entry.name)]
    except OSError:
        return ()
    return tuple(f"memory/{name}" for name in sorted(names))


def conflict_notice(copies: tuple[str, ...]) -> str | None:
    """The warning a search answer starts with while copies wait (``None``: none wait)."""
    return Messages.CONFLICT_COPIES.format(copies=", ".join(copies)) if copies else None
