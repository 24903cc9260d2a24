"""``RecordStore``: the only code that writes ``memory/records.md``.

Every mutation runs one transaction: check the paths, take the writer lock, read and decode the
file, check the caller's revision, apply the change to a copy, encode it, write a temp file and
fsync it, check that nobody changed the file meanwhile, rename it over the old one and fsync the
directory. A process killed at any point leaves either the old file or the new one.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Final

from memquill.errors import (
    CapacityError,
    ConflictError,
    InvalidInputError,
    Messages,
    NotFoundError,
)
from memquill.store._append import append_candidates
from memquill.store._backend import RecordsBackend, open_backend
from memquill.store._codec import (
    MAX_STORE_BYTES,
    JSONValue,
    Record,
    iso_timestamp,
    validate_content,
    validate_source,
)
from memquill.store._doctor import DoctorReport
from memquill.store._import import import_operation
from memquill.store._record_key import KeySource, keyed_fields, recognised_hashes
from memquill.store._results import (
    Candidate,
    Preflight,
    ProjectedRecord,
    Projection,
    Snapshot,
    WriteResult,
    check_revision,
)
from memquill.store._secrets import SecretScanner
from memquill.store._store_sync import SyncOperations
from memquill.store._transaction import Locations, Outcome, locate
from memquill.text import utf16_len

__all__ = ["MAX_BATCH", "RecordStore"]

MAX_BATCH: Final = 40
MAX_KEY_UNITS: Final = 1000
_MANUAL: Final[Mapping[str, JSONValue]] = {"kind": "manual"}
# The key is hashed as UTF-8, which a lone surrogate does not have.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class RecordStore(SyncOperations):
    """The records store of one workspace.

    Args:
        workspace: absolute path of the workspace folder.
        lock_timeout: seconds a writer waits for the lock before failing ``busy``.
        now: the clock (UTC); injectable for tests.
        secrets: the credential scanner every write uses.
        location: where the records live: ``None`` or ``"file"`` for the workspace's
            ``memory/records.md``, or a ``postgresql://`` URL (``docs/multi-host.md``). Read
            as given: the ``MEMQUILL_STORE`` variable is the sessions' business.
    """

    def __init__(
        self,
        workspace: str | os.PathLike[str],
        *,
        lock_timeout: float = 5.0,
        now: Callable[[], datetime] | None = None,
        secrets: SecretScanner | None = None,
        location: str | None = None,
        record_key: KeySource | None = None,
    ) -> None:
        self._workspace = os.fspath(workspace)
        self._lock_timeout = lock_timeout
        self._now = now or (lambda: datetime.now(UTC))
        self._secrets = secrets or SecretScanner()
        self._projection: Projection | None = None
        self._backend = open_backend(self._workspace, location)
        self._record_key = record_key or self._backend.record_key()

    def __repr__(self) -> str:
        return f"RecordStore({self._workspace!r}, backend={self._backend.kind!r})"

    @property
    def workspace(self) -> str:
        """The workspace path as given."""
        return self._workspace

    @property
    def record_key(self) -> KeySource:
        """Where this store's operation hashes are keyed (the user's key file, or the row of a
        database store)."""
        return self._record_key

    @property
    def secrets(self) -> SecretScanner:
        """The credential scanner writes use (``doctor`` reports with it too)."""
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
            ProjectedRecord(
                id=record.id,
                path=record.projection_path,
                content=record.content,
                source=record.source,
                created_at=record.created_at,
                updated_at=record.updated_at,
                revision=snapshot.revision,
                record_revision=snapshot.record_revision(record),
            )
            for record in snapshot.records
            if record.status == "active"
        )
        self._projection = Projection(snapshot.revision, projected)
        return self._projection

    def preflight(self, reserve_bytes: int = 1024) -> Preflight:
        """Check, without writing, that a write of ``reserve_bytes`` more could succeed now.

        Raises:
            InvalidInputError: ``reserve_bytes`` is not a non-negative integer.
            CapacityError: the store is (or would be) over 2 MiB.
            BusyError: another writer holds the lock.
            CorruptError, UnsafePathError, StorageError.
        """
        snapshot = self.snapshot()
        if type(reserve_bytes) is not int or reserve_bytes < 0:
            raise InvalidInputError(Messages.RESERVATION)
        if snapshot.size_bytes + reserve_bytes > MAX_STORE_BYTES:
            raise CapacityError(Messages.INSUFFICIENT)
        self._backend.check_writable()
        return Preflight(snapshot.revision, snapshot.size_bytes, MAX_STORE_BYTES)

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

    # -- writes ----------------------------------------------------------------------------

    def save(
        self, candidates: Sequence[Candidate], expected_revision: str | None = None
    ) -> WriteResult:
        """Append 1–40 new facts, idempotently.

        A candidate whose idempotency key already wrote the same fact is skipped; when every
        candidate is skipped the result is ``duplicate``. A key or a source message that was
        corrected or forgotten blocks the whole batch (``blocked``): forgotten facts never come
        back.

        Raises:
            InvalidInputError, SecretError: before anything is touched.
            ConflictError: ``expected_revision`` is stale, or a key was reused for other data.
            CapacityError, BusyError, CorruptError, UnsafePathError.
            StorageError: also when the record key cannot be used (see ``_record_key``).
        """
        batch = list(candidates)
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidInputError(Messages.BATCH_SIZE)
        for candidate in batch:
            self._check_content(candidate.content)
            validate_source(candidate.source)
            key = candidate.idempotency_key
            if not key or utf16_len(key) > MAX_KEY_UNITS or _SURROGATE.search(key):
                raise InvalidInputError(Messages.KEY_REQUIRED)

        key = self._record_key.load()
        known = self._record_key.known()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            if expected_revision is not None and expected_revision != snapshot.revision:
                raise ConflictError(Messages.STALE)
            stamp = iso_timestamp(self._now())
            return append_candidates(batch, draft, key, stamp, lambda: str(uuid.uuid4()), known)

        return self._backend.transact(operation, self._lock_timeout)

    def correct(
        self,
        record_id: str,
        content: str,
        expected_revision: str,
        source: Mapping[str, JSONValue] = _MANUAL,
    ) -> WriteResult:
        """Replace an active fact with a new version; the old one is superseded.

        ``expected_revision`` may be the store revision or the record's own revision.

        Raises:
            ConflictError: the revision is stale. NotFoundError: no active record has that id.
            InvalidInputError, SecretError, CapacityError, BusyError, CorruptError,
            UnsafePathError, StorageError.
        """
        self._check_content(content)
        validate_source(source)
        key = self._record_key.load()

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            target = snapshot.find(record_id, active_only=True)
            check_revision(snapshot, target, expected_revision)
            if target is None:
                raise NotFoundError(Messages.ACTIVE_NOT_FOUND)
            now = iso_timestamp(self._now())
            draft[draft.index(target)] = target.evolve(status="superseded", updatedAt=now)
            hashed = keyed_fields(key, f"correction:{record_id}:{expected_revision}:{content}")
            version = target.evolve(
                content,
                id=str(uuid.uuid4()),
                source=dict(source),
                status="active",
                createdAt=now,
                updatedAt=now,
                operationHash=hashed["operationHash"],
                keyId=hashed["keyId"],
                supersedes=record_id,
            )
            draft.append(version)
            return Outcome("saved", (version.id,), frozenset({version.id}))

        return self._backend.transact(operation, self._lock_timeout)

    def revoke(self, record_id: str, expected_revision: str) -> WriteResult:
        """Forget a fact and every earlier version of it; its metadata stays as a tombstone.

        ``expected_revision`` may be the store revision or the record's own revision.

        Raises:
            ConflictError: the revision is stale. NotFoundError: no record has that id.
            CapacityError, BusyError, CorruptError, UnsafePathError, StorageError.
        """

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            target = snapshot.find(record_id)
            check_revision(snapshot, target, expected_revision)
            if target is None:
                raise NotFoundError(Messages.NOT_FOUND)
            if target.status == "revoked":
                return Outcome("duplicate", (record_id,))
            now = iso_timestamp(self._now())
            draft[:] = [
                record.evolve("", status="revoked", updatedAt=now)
                if record.root_id == target.root_id
                else record
                for record in draft
            ]
            return Outcome("saved", (record_id,), frozenset({record_id}))

        return self._backend.transact(operation, self._lock_timeout)

    def compact(self, expected_revision: str) -> WriteResult:
        """Drop the content of superseded versions, keeping all tombstone metadata.

        Never automatic: it frees space in a store near 2 MiB while forgotten and corrected
        facts still block their idempotency keys and source messages.

        Raises:
            ConflictError: ``expected_revision`` is not the store revision.
            BusyError, CorruptError, UnsafePathError, StorageError.
        """

        def operation(snapshot: Snapshot, draft: list[Record]) -> Outcome:
            if expected_revision != snapshot.revision:
                raise ConflictError(Messages.STALE)
            emptied = 0
            for index, record in enumerate(draft):
                if record.status == "superseded" and record.content:
                    draft[index] = record.evolve("")
                    emptied += 1
            return Outcome("saved" if emptied else "duplicate")

        return self._backend.transact(operation, self._lock_timeout)

    def replace(self, data: bytes, expected_revision: str) -> WriteResult:
        """Put an edited copy of ``records.md`` back (``memquill import``): one validated
        compare-and-swap write of all its records.

        The copy may edit the text of facts and add records; every existing record keeps its
        metadata (tombstones, versions, keys). ``duplicate`` when it changes nothing.

        Raises:
            CorruptError: ``data`` is not a valid managed records file.
            ConflictError: ``expected_revision`` is not the store revision.
            InvalidInputError: the copy drops a record or changes its metadata.
            SecretError, CapacityError, BusyError, UnsafePathError, StorageError.
        """
        operation = import_operation(data, expected_revision, self._secrets)
        return self._backend.transact(operation, self._lock_timeout)

    def doctor(self, fix: bool = False, *, expected_revision: str | None = None) -> DoctorReport:
        """Inspect the store; with ``fix``, remove staging files a crashed writer left and
        repair an unambiguous hand edit (after a backup).

        Args:
            fix: remove staging files and repair a hand edit.
            expected_revision: repair only the file whose repair plan
                (:attr:`DoctorReport.repair`) carried this revision.

        Raises:
            UnsafePathError, StorageError: the workspace itself cannot be used.
            BusyError: ``fix`` could not take the writer lock in time.
            ConflictError: the file changed since it was read, or since the plan was shown.
        """
        return self._backend.doctor(
            secrets=self._secrets,
            fix=fix,
            lock_timeout=self._lock_timeout,
            now=self._now,
            record_key=self._record_key,
            expected_revision=expected_revision,
        )

    # -- internals -------------------------------------------------------------------------

    def _check_content(self, content: str) -> None:
        self._secrets.check(validate_content(content))
