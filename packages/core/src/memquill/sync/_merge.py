"""Merging other machines' copies of ``records.md``, and settling what a merge leaves waiting.

Git's merge driver (``memquill merge BASE OURS THEIRS``: :func:`merge_driver`) gets three
temporary files and reads the result back from OURS, git's own file, merged without the
writer lock but with the store's care (:func:`merge_into_file`): every side read bounded and
without following a symlink, the result staged and fsynced beside it, the file compared again
(a compare-and-swap on the bytes merged) and only then replaced, in one rename. When OURS is a
workspace's ``memory/records.md`` (:func:`records_workspace`), and for a copy handed over
(:func:`merge_copy`) or the conflict copies a file-sync tool left
(:func:`resolve_conflict_copies`), the merge is a store write under the writer lock. A
diverged fact waits for a person's choice (:func:`keep_version`). Every write passes the write
path's one rule (the session may write now), and a merge that brings another machine's forget
deletes the forgotten facts' vectors at once, as a forget does. The record-level merge itself
is the store's: it runs inside the store's locked transaction.
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

    A workspace's ``records.md``: a person's store write, in the session ``open_workspace``
    opens (sessions are opened above this layer). Any other file: merged in place, keeping
    forgotten text's fingerprint under this machine's record key if it has one (none is
    created for a file outside a workspace).

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
