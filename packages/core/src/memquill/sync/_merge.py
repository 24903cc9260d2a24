"""Merging other machines' copies of ``records.md`` and settling what a merge leaves waiting.

Three ways another machine's records arrive (``docs/sync.md``):

- **git's merge driver** (``memquill merge BASE OURS THEIRS``, :func:`merge_driver`). Git
  gives a merge driver three temporary files (``%O %A %B``: the common ancestor, this side,
  the other side) and reads the result back from the second. That file is git's own, not a
  workspace's ``records.md``, so it is merged without the writer lock, but with the rest of
  the store's care (:func:`merge_into_file`): both sides and the base are read bounded and
  without following a symlink, the result is written to a staging file beside it and
  fsynced, the file is compared again (a compare-and-swap on the bytes the merge read) and
  only then replaced, in one rename. When OURS is a workspace's ``memory/records.md``
  (:func:`records_workspace`) the merge is a store write instead, under the writer lock
  (:func:`merge_copy`).
- **a copy handed over** (:func:`merge_copy`): merged into the session's store, record by
  record, in one locked write.
- **conflict copies** a file-sync tool left beside ``records.md``
  (:func:`resolve_conflict_copies`): each merged, then removed.

A diverged fact waits for a person's choice (:func:`keep_version`). The record-level merge
itself is the store's (``memquill.store``: it runs inside the store's locked transaction, and
``RecordStore.merge``, ``keep_version``, ``resolve_conflict_copies`` and ``doctor`` use it).
Every write here goes through the write path's one rule (``memquill.tools``: the session may
write now), and a merge that brings another machine's forget deletes the forgotten facts'
vectors at the merge, as a forget does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memquill.errors import ConflictError, MemoryRecordError, Messages, StorageError
from memquill.foundation.atomic import atomic_write
from memquill.store import (
    MergeReport,
    MergeResult,
    RecordKey,
    ResolveReport,
    merge_files,
    read_bounded,
)
from memquill.tools import (
    MemorySession,
    WriteOutcome,
    WriteSource,
    authorize,
    forget_revoked_vectors,
    outcome_of,
)


def read_copy(path: Path) -> bytes:
    """The bytes of a copy of ``records.md`` at ``path`` (an empty file: none).

    Raises:
        StorageError: it is missing, not a regular file, a symlink, unreadable or over 2 MiB.
    """
    if not path.exists() and not path.is_symlink():
        raise StorageError(Messages.COPY_UNREADABLE)
    try:
        return read_bounded(path)
    except (MemoryRecordError, OSError):
        raise StorageError(Messages.COPY_UNREADABLE) from None


def merge_into_file(
    path: Path, base: bytes, theirs: bytes, record_key: bytes | None = None
) -> tuple[MergeReport, bool]:
    """Merge ``theirs`` (with ancestor ``base``) into the file ``path``: the report, and
    whether the file changed. Text a forget erases keeps its fingerprint keyed with
    ``record_key`` (this machine's, when it has one).

    Raises:
        CorruptError: a side is not a valid records file. CapacityError: the result would
        exceed 2 MiB. ConflictError: the file changed while merging. StorageError.
    """
    ours = read_copy(path)
    data, report = merge_files(base, ours, theirs, record_key)
    if data == ours:
        return report, False

    def unchanged() -> None:
        if read_bounded(path) != ours:
            raise ConflictError(Messages.CHANGED_WHILE_SAVING)

    try:
        atomic_write(path, data, check=unchanged)
    except MemoryRecordError:
        raise
    except OSError as error:
        raise StorageError(Messages.SAVE_FAILED) from error
    return report, True


def records_workspace(path: Path) -> Path | None:
    """The workspace whose ``memory/records.md`` ``path`` is (symlinks resolved), if it is
    one: the driver then merges into the store rather than into a plain file."""
    real = Path(os.path.realpath(path))
    if real.name == "records.md" and real.parent.name == "memory":
        return real.parent.parent
    return None


def merge_driver(
    base: Path, ours: Path, theirs: Path, *, open_workspace: Callable[[Path], MemorySession]
) -> tuple[MergeReport, bool]:
    """What ``memquill merge BASE OURS THEIRS`` does: the report, and whether OURS changed.

    OURS a workspace's ``records.md``: a store write through a session ``open_workspace``
    opens for that workspace (the caller's: sessions are opened above this layer), from a
    person (``manual``). Any other file: merged in place, text a forget erases keeping its
    fingerprint under this machine's record key when it has one (a file outside a workspace
    is merged without creating a key).

    Raises:
        StorageError: a copy cannot be read. CorruptError, CapacityError, ConflictError, and
        the store's errors.
    """
    base_data, their_data = read_copy(base), read_copy(theirs)
    workspace = records_workspace(ours)
    if workspace is not None:
        session = open_workspace(workspace)
        result = merge_copy(session, their_data, base_data, source=WriteSource.manual())
        return result.report, result.write.status == "saved"
    return merge_into_file(ours, base_data, their_data, RecordKey().current())


def merge_copy(
    session: MemorySession,
    theirs: bytes,
    base: bytes = b"",
    *,
    source: WriteSource,
    expected_revision: str | None = None,
) -> MergeResult:
    """Merge another machine's copy of ``records.md`` (with their common ancestor ``base``,
    empty when unknown) into the session's store, record by record (``docs/sync.md``).

    Raises:
        InvalidInputError: the session may not write now.
        CorruptError, ConflictError, and the store's errors.
    """
    authorize(session, source.metadata())
    merged = session.store.merge(theirs, base, expected_revision=expected_revision)
    if merged.write.status == "saved":
        forget_revoked_vectors(session, merged.write.records)  # another machine's forgets
    return merged


def keep_version(
    session: MemorySession, record_id: str, expected_revision: str, *, source: WriteSource
) -> WriteOutcome:
    """Settle a diverged fact on the version ``record_id`` (a unique prefix will do): the
    outcome names the version that now stands.

    Raises:
        InvalidInputError (also: not a diverged fact), ConflictError, NotFoundError, and the
        store's errors.
    """
    authorize(session, source.metadata())
    result = session.store.keep_version(
        record_id, expected_revision, source.metadata(), prefixes=True
    )
    return outcome_of("keep", result, result.record_id, result.status)


def resolve_conflict_copies(session: MemorySession, *, source: WriteSource) -> ResolveReport:
    """Merge every conflict copy a file-sync tool left beside ``records.md`` and remove it
    (a backup of ``records.md`` is written before the first change).

    Raises:
        InvalidInputError: the session may not write now. CorruptError, BusyError and the
        store's errors.
    """
    authorize(session, source.metadata())
    report = session.store.resolve_conflict_copies()
    if any(copy.problem is None for copy in report.copies):
        forget_revoked_vectors(session, session.store.snapshot().records)
    return report
