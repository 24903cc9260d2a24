"""The records store's sync operations (``docs/sync.md``), part of :class:`RecordStore`.

- :meth:`SyncOperations.merge`: another machine's copy of ``records.md`` merged in, record by
  record (:mod:`memquill.store._merge`), in one locked write of whatever the file holds then.
- :meth:`SyncOperations.keep_version`: a person's choice among a diverged fact's versions.
- :meth:`SyncOperations.resolve_conflict_copies`: every conflict copy a file-sync tool left
  beside ``records.md`` merged in and then removed. The first merge that changes the file
  writes a backup of it first (``memory/.records-backup-<time>.md``, as ``doctor --fix``
  does), under the writer lock, before the new file replaces it. A copy is removed only
  once the merged file is durable, so a crash in between merges it again next time (merging is
  idempotent); a copy that is not a records file is left where it is, with the reason.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memquill.errors import MemoryRecordError, Messages, StorageError
from memquill.foundation.atomic import fsync_folder
from memquill.store._backend import RecordsBackend
from memquill.store._codec import iso_timestamp, validate_source
from memquill.store._fileio import read_bounded
from memquill.store._record import JSONValue
from memquill.store._record_key import KeySource, keyed_fields
from memquill.store._results import WriteResult
from memquill.store._transaction import locate

if TYPE_CHECKING:
    from memquill.store._merge import MergeReport
    from memquill.store._merge_ops import MergeResult

_MANUAL: Final[Mapping[str, JSONValue]] = {"kind": "manual"}


@dataclass(frozen=True, slots=True)
class ResolvedCopy:
    """One conflict copy and what ``resolve`` did with it.

    Attributes:
        path: workspace-relative.
        report: what merging it decided (``None``: it was left, ``problem`` says why).
        problem: why it was not merged (not a records file, unreadable...).
    """

    path: str
    report: MergeReport | None = None
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class ResolveReport:
    """What ``resolve`` did: each copy, the backup written first (if any), the revision after."""

    copies: tuple[ResolvedCopy, ...]
    backup: str | None
    revision: str


class SyncOperations:
    """Merging, choosing and resolving; mixed into :class:`~memquill.store.RecordStore`."""

    _workspace: str
    _lock_timeout: float
    _now: Callable[[], datetime]
    _backend: RecordsBackend
    _record_key: KeySource

    def merge(
        self, theirs: bytes, base: bytes = b"", *, expected_revision: str | None = None
    ) -> MergeResult:
        """Merge another copy of ``records.md`` (and their common ancestor ``base``; empty
        when unknown) into the store, in one locked write.

        Raises:
            CorruptError: ``theirs`` or ``base`` is not a valid records file (or the store's).
            ConflictError: ``expected_revision`` is given and stale.
            CapacityError, BusyError, UnsafePathError, StorageError.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._merge import MergeReport
        from memquill.store._merge_ops import MergeResult, merge_operation

        reports: list[MergeReport] = []
        operation = merge_operation(
            theirs, base, expected_revision, reports, record_key=self._record_key.load()
        )
        write = self._backend.transact(operation, self._lock_timeout)
        return MergeResult(write, reports[-1] if reports else MergeReport())

    def keep_version(
        self, record_id: str, expected_revision: str, source: Mapping[str, JSONValue] = _MANUAL
    ) -> WriteResult:
        """Settle a diverged fact on version ``record_id``: another machine's version becomes a
        correction of the active one (``source``); every waiting version is marked
        ``resolvedBy`` the version that stands. ``expected_revision``: the store's or the
        record's.

        Raises:
            ConflictError, NotFoundError, InvalidInputError (not diverged), and the store's
            errors.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._merge_ops import keep_operation

        validate_source(source)
        key = self._record_key.load()
        operation = keep_operation(
            record_id,
            expected_revision,
            source=dict(source),
            now=iso_timestamp(self._now()),
            new_id=lambda: str(uuid.uuid4()),
            hashed=lambda material: keyed_fields(key, material),
        )
        return self._backend.transact(operation, self._lock_timeout)

    def conflict_copies(self) -> tuple[str, ...]:
        """Copies of ``records.md`` a file-sync tool left beside it, workspace-relative (none
        for a database store)."""
        return self._backend.conflict_copies()

    def resolve_conflict_copies(self) -> ResolveReport:
        """Merge every conflict copy into ``records.md`` and remove it (module docstring).

        Raises:
            CorruptError: ``records.md`` itself is not valid (``doctor`` first).
            BusyError, UnsafePathError, StorageError.
        """
        # Merges: loaded by the first merge, never by a read (cold start).
        from memquill.store._merge import MergeReport
        from memquill.store._merge_ops import merge_operation

        locations = locate(self._workspace)
        backup: str | None = None
        done: list[ResolvedCopy] = []
        for path in self.conflict_copies() if self._backend.kind == "file" else ():
            copy = locations.root / path
            reports: list[MergeReport] = []
            first = self._now() if backup is None else None  # one backup, before any change
            try:
                operation = merge_operation(
                    read_bounded(copy), b"", None, reports, first, self._record_key.load()
                )
            except MemoryRecordError as error:
                done.append(ResolvedCopy(path, problem=error.message))
                continue
            except OSError:
                done.append(ResolvedCopy(path, problem=Messages.READ_FAILED))
                continue
            written = self._backend.transact(operation, self._lock_timeout)
            backup = backup or written.backup
            _remove(copy)
            done.append(ResolvedCopy(path, reports[-1] if reports else MergeReport()))
        revision = self._backend.snapshot().revision
        return ResolveReport(tuple(done), backup, revision)


def _remove(copy: Path) -> None:
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(copy)
        fsync_folder(copy.parent)
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error
