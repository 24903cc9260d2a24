"""The read side of ``RecordStore``: where the records are, and what they say now.

Nothing here creates, locks or writes anything; :mod:`memquill.store._store` adds the writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final

from memquill.errors import CapacityError, InvalidInputError, Messages
from memquill.store._backend import RecordsBackend, open_backend
from memquill.store._capacity import check_capacity, workspace_capacity
from memquill.store._fact_keys import validate_key
from memquill.store._record import Record
from memquill.store._record_key import KeySource, recognised_hashes
from memquill.store._results import Preflight, ProjectedRecord, Projection, Snapshot
from memquill.store._transaction import Locations, locate

if TYPE_CHECKING:
    from memquill.store._secrets import SecretScanner

DEFAULT_LOCK_TIMEOUT: Final = 5.0


class StoreReader:
    """The read side of a workspace's records store (:class:`RecordStore` adds the writes).

    Args:
        workspace: absolute path of the workspace folder.
        lock_timeout: seconds a writer waits for the lock before failing ``busy``.
        now: the clock (UTC); injectable for tests.
        secrets: the credential scanner every write uses (default: the built-in detectors,
            built on first use: a store that only reads never loads them).
        location: where the records live: ``None`` or ``"file"`` for the workspace's
            ``memory/records.md``, or a ``postgresql://`` URL (``docs/multi-host.md``). Read
            as given: the ``MEMQUILL_STORE`` variable is the sessions' business.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        now: Callable[[], datetime] | None = None,
        secrets: SecretScanner | None = None,
        location: str | None = None,
        record_key: KeySource | None = None,
        capacity: int | None = None,
    ) -> None:
        self._workspace = os.fspath(workspace)
        chosen = (
            workspace_capacity(self._workspace) if capacity is None else check_capacity(capacity)
        )
        self._lock_timeout = lock_timeout
        self._now = now or (lambda: datetime.now(UTC))
        self._secrets = secrets
        self._projection: Projection | None = None
        self._backend = open_backend(self._workspace, location, chosen)
        self._record_key = record_key or self._backend.record_key()

    def __repr__(self) -> str:
        return f"RecordStore({self._workspace!r}, backend={self._backend.kind!r})"

    @property
    def workspace(self) -> str:
        """The workspace path as given."""
        return self._workspace

    @property
    def capacity(self) -> int:
        """The largest records file this store writes or reads, in bytes (default 2 MiB; a
        setting: :mod:`memquill.store._capacity`)."""
        return self._backend.capacity

    @property
    def record_key(self) -> KeySource:
        """Where this store's operation hashes are keyed (the user's key file, or the row of a
        database store)."""
        return self._record_key

    @property
    def secrets(self) -> SecretScanner:
        """The credential scanner writes use (``doctor`` reports with it too)."""
        if self._secrets is None:
            # Built on first use: the detectors cost a cold start that a read never needs.
            from memquill.store._secrets import SecretScanner

            self._secrets = SecretScanner()
        return self._secrets

    def close(self) -> None:
        """Let go of the backend's connection, if it keeps one (the store stays usable)."""
        self._backend.close()

    @property
    def backend(self) -> RecordsBackend:
        """Where the records live (``backend.kind``: ``file`` or ``postgres``)."""
        return self._backend

    # -- reads -----------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Read the store. Read only: nothing is created, locked or written.

        Raises:
            UnsafePathError, CapacityError, CorruptError, StorageError.
        """
        return self._backend.snapshot()

    def export(self) -> bytes:
        """The exact bytes of ``records.md`` (from the database, for a database store).

        Raises:
            UnsafePathError, CapacityError, StorageError.
        """
        return self._backend.read()

    def locations(self) -> Locations:
        """The canonical workspace and the store's paths, checked for safety.

        Raises:
            UnsafePathError, StorageError.
        """
        return locate(self._workspace)

    def projection(self) -> Projection:
        """The active records as virtual files, cached per store revision.

        Reading the file and comparing bytes is cheap; decoding it is not, so an unchanged
        store is never decoded twice.
        """
        snapshot = self.snapshot()
        cached = self._projection
        if cached is not None and cached.revision == snapshot.revision:
            return cached
        projected = tuple(
            ProjectedRecord.of(snapshot, record)
            for record in snapshot.records
            if record.status == "active"
        )
        self._projection = Projection(snapshot.revision, projected)
        return self._projection

    def preflight(self, reserve_bytes: int = 1024) -> Preflight:
        """Check, without writing, that a write of ``reserve_bytes`` more could succeed now.

        Raises:
            InvalidInputError: ``reserve_bytes`` is not a non-negative integer.
            CapacityError: the store is (or would be) over its capacity.
            BusyError: another writer holds the lock.
            CorruptError, UnsafePathError, StorageError.
        """
        snapshot = self.snapshot()
        if type(reserve_bytes) is not int or reserve_bytes < 0:
            raise InvalidInputError(Messages.RESERVATION)
        if snapshot.size_bytes + reserve_bytes > self.capacity:
            raise CapacityError(Messages.INSUFFICIENT)
        self._backend.check_writable()
        return Preflight(snapshot.revision, snapshot.size_bytes, self._backend.quota)

    def find_operation(self, idempotency_key: str) -> Record | None:
        """The version (any status) that a save with ``idempotency_key`` wrote, if any.

        Matches memquill's keyed hash and the original system's unkeyed one (extraction uses
        it to recover a committed batch after a crash).

        Raises:
            UnsafePathError, CapacityError, CorruptError, StorageError (also when the record
            key cannot be used).
        """
        keys = (self._record_key.load(), *self._record_key.known())
        hashes = recognised_hashes(keys, idempotency_key)
        return next((r for r in self.snapshot().records if r.operation_hash in hashes), None)

    def find_key(self, key: str) -> Record | None:
        """The current (active) version of the fact named ``key``, read now; ``None`` if no
        active fact has it. Its record revision is ``snapshot().record_revision(record)``, or
        in one read: ``snapshot().by_key(key)``.

        Raises:
            InvalidInputError: ``key`` is not a valid key.
            UnsafePathError, CapacityError, CorruptError, StorageError.
        """
        return self.snapshot().by_key(validate_key(key))
